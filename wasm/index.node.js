// Node entry: loads the .wasm synchronously from the package directory, so
// `import { Engine } from 'chime'` needs no await and no bundler.
import { readFileSync } from 'node:fs';
import { initSync } from './pkg/chime_wasm.js';

initSync({ module: readFileSync(new URL('./pkg/chime_wasm_bg.wasm', import.meta.url)) });

export * from './js/core.js';
export * from './js/scheduler.js';
export { FileStore } from './js/file-store.js';
