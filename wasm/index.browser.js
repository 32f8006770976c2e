// Browser / bundler / edge entry: fetches the .wasm next to this module
// (`new URL(..., import.meta.url)`, which Vite, webpack 5 and esbuild
// rewrite) with top-level await, so importers see a ready module.
import init from './pkg/chime_wasm.js';

await init({ module_or_path: new URL('./pkg/chime_wasm_bg.wasm', import.meta.url) });

export * from './js/core.js';
export * from './js/scheduler.js';
