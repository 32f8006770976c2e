// Instantiating the wasm, once per realm. The node and browser entries do
// it on import; the `init` entry (for bundlers that do not copy
// `new URL('./x.wasm', import.meta.url)` assets, like esbuild) leaves it to
// the caller's `await init({ wasm })`. Until then every entry point throws
// ChimeError `not_initialized` instead of the glue's TypeError.
import initGlue, { initSync as initGlueSync } from '../pkg/chime_wasm.js';
import { ChimeError } from './errors.js';

let ready = false;
let pending;

/** Throws `not_initialized` until the wasm is instantiated. */
export function ensureReady() {
  if (!ready) throw new ChimeError('not_initialized', 'not_initialized: call `await init({ wasm })` (from chime-scheduler/init) first');
}

/** Instantiates from bytes (or a compiled module), synchronously. */
export function initSync(bytes) {
  if (ready) return;
  try {
    initGlueSync({ module: bytes });
  } catch (e) {
    throw new ChimeError('init_failed', `init_failed: ${e?.message ?? e}`, 'wasm', { cause: e });
  }
  ready = true;
}

/**
 * Instantiates the engine from `wasm`: a URL (string or URL, fetched), a
 * Response or a promise of one, the bytes (ArrayBuffer, typed array) or a
 * WebAssembly.Module. Resolves once ready; later calls resolve at once.
 */
export function init(opts) {
  if (ready) return Promise.resolve();
  const wasm = opts?.wasm;
  if (wasm === undefined || wasm === null) {
    return Promise.reject(new ChimeError('invalid_input', 'invalid_input: wasm: expected a URL, a Response, bytes or a WebAssembly.Module', 'wasm'));
  }
  pending ??= initGlue({ module_or_path: wasm }).then(
    () => {
      ready = true;
    },
    (e) => {
      pending = undefined;
      throw new ChimeError('init_failed', `init_failed: ${e?.message ?? e}`, 'wasm', { cause: e });
    },
  );
  return pending;
}
