// The one error class of the package: every error it throws (or rejects
// with) is a ChimeError with a stable `code`, so callers branch on `code`
// and never on message text. The codes are listed in docs/javascript.md,
// "Errors".

/** An input the engine refused, a bad spec, a malformed argument, or misuse. */
export class ChimeError extends Error {
  /**
   * @param {string} code stable machine-readable code, e.g. `invalid_spec`
   * @param {string} message human-readable, starts with the code
   * @param {string} [field] the input field concerned (camelCase)
   * @param {{cause?: unknown}} [options]
   */
  constructor(code, message, field, options) {
    super(message, options);
    this.name = 'ChimeError';
    /** Stable machine-readable code, e.g. `invalid_spec`. */
    this.code = code;
    /** The input field concerned (camelCase), when there is one. */
    this.field = field;
  }
}

/** `invalid_input` on `field`, the way the Rust side words it. */
export function invalidInput(field, message, cause) {
  return new ChimeError('invalid_input', `invalid_input: ${field}: ${message}`, field, cause === undefined ? undefined : { cause });
}

/**
 * Any value thrown by the wasm module as a ChimeError: the binding throws
 * JSON `{code, field, message}`; the wasm-bindgen glue throws a TypeError
 * for an argument it cannot convert; a trap (a bug) is a RuntimeError.
 */
export function fromThrown(e) {
  if (e instanceof ChimeError) return e;
  if (typeof e === 'string' && e.startsWith('{')) {
    const { code, field, message } = JSON.parse(e);
    return new ChimeError(code, message, field ?? undefined);
  }
  if (e instanceof TypeError) return invalidInput('argument', e.message, e);
  const message = e instanceof Error ? e.message : String(e);
  return new ChimeError('internal', `internal: ${message}`, undefined, { cause: e });
}
