// Node entry: loads the .wasm synchronously from the package directory, so
// `import { Engine } from 'chime-scheduler'` needs no await and no bundler.
import { readFileSync } from 'node:fs';
import { initSync } from './js/init.js';

initSync(readFileSync(new URL('./pkg/chime_wasm_bg.wasm', import.meta.url)));

export * from './js/core.js';
export * from './js/scheduler.js';
export { FileStore } from './js/file-store.js';
