// Entry without automatic instantiation, for bundlers that do not emit
// `new URL('./x.wasm', import.meta.url)` assets (esbuild) and for hosts
// that load the bytes themselves:
//   import { init, preview } from 'chime-scheduler/init';
//   import wasm from 'chime-scheduler/chime.wasm';   // esbuild --loader:.wasm=file
//   await init({ wasm });
// Until `init` resolves, every entry point throws ChimeError `not_initialized`.
export { init } from './js/init.js';
export * from './js/core.js';
export * from './js/scheduler.js';
