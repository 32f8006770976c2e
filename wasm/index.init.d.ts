// Types of the `chime-scheduler/init` entry: the shared API (no FileStore)
// and `init`, which must resolve before anything else is called.
export * from './api.js';

/**
 * What `init` instantiates the engine from: a URL (fetched; with esbuild
 * `import wasm from 'chime-scheduler/chime.wasm'` and `--loader:.wasm=file`),
 * a Response or a promise of one, the bytes, or a compiled module.
 */
export type WasmSource = string | URL | Request | Response | Promise<Response> | BufferSource | WebAssembly.Module;

/** Instantiates the engine; later calls resolve at once. Rejects with ChimeError `init_failed`. */
export function init(opts: { wasm: WasmSource }): Promise<void>;
