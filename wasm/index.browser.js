// Browser / bundler / edge entry: fetches the .wasm next to this module
// (`new URL(..., import.meta.url)`, which Vite and webpack 5 turn into an
// emitted asset; esbuild does not: use the `chime-scheduler/init` entry
// there) with top-level await, so importers see a ready module.
import { init } from './js/init.js';

await init({ wasm: new URL('./pkg/chime_wasm_bg.wasm', import.meta.url) });

export * from './js/core.js';
export * from './js/scheduler.js';
