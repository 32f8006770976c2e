// Types of the browser / bundler entry (index.browser.js): the shared API,
// without FileStore (Node only, not exported here).
export * from './api.js';
