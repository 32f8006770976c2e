// The JS face of the raw wasm exports: Date handling, JSON.parse of
// results, ChimeError. No scheduling logic lives here: every decision is the
// core's (see ../src/lib.rs and ../../core).
import * as raw from '../pkg/chime_wasm.js';
import { ChimeError, fromThrown, invalidInput } from './errors.js';
import { ensureReady } from './init.js';

export { ChimeError } from './errors.js';

function call(f) {
  try {
    return f();
  } catch (e) {
    throw fromThrown(e);
  }
}

/** A string argument, or `invalid_input` on `field`. */
function str(v, field) {
  if (typeof v !== 'string') throw invalidInput(field, `expected a string, got ${v === null ? 'null' : typeof v}`);
  return v;
}

/** Timestamps in: a number of ms since the epoch, or a Date. Out: numbers. */
export function toMs(t, field = 'now') {
  if (typeof t === 'number') return t;
  if (t instanceof Date) return t.getTime();
  throw invalidInput(field, 'expected ms or a Date');
}

// Wire fields that hold instants: a Date there is sent as ms. Other Dates
// (inside a payload, say) keep JSON's usual ISO string.
const TIME_FIELDS = new Set(['now', 'runAt', 'startAt', 'endAt', 'from', 'to', 'retryAt', 'before', 'validUntil']);
function replacer(key, value) {
  if (typeof value === 'string' && TIME_FIELDS.has(key)) {
    const original = this[key];
    if (original instanceof Date) return original.getTime();
  }
  return value;
}

/**
 * An input as the JSON text the engine parses (and a journal records):
 * `"advance"` or `{"enqueue": {...}}`; Dates in time fields become ms.
 */
export function encodeInput(input) {
  let json;
  try {
    json = JSON.stringify(input, replacer);
  } catch (e) {
    // A BigInt or a cycle: JSON has no text for it.
    throw invalidInput('input', e.message, e);
  }
  if (json === undefined) throw invalidInput('input', `expected an input object or "advance", got ${typeof input}`);
  return json;
}

const parseOpt = (s) => (s === undefined ? undefined : JSON.parse(s));

function specOptions(opts = {}) {
  if (typeof opts !== 'object' || opts === null) throw invalidInput('options', 'expected an object');
  const { from = Date.now(), ...rest } = opts;
  return JSON.stringify({ ...rest, from: toMs(from, 'from') });
}

/**
 * The next `count` (default 10) fires of `spec` strictly after `from`
 * (default: now), with civil time, UTC offset and DST notes.
 */
export function preview(spec, opts) {
  ensureReady();
  return JSON.parse(call(() => raw.preview(str(spec, 'spec'), specOptions(opts))));
}

/**
 * Checks a spec as an upsert would: `{valid: true, zone, fixedTime,
 * everyMs?, next}` or `{valid: false, error: ChimeError}`.
 */
export function validate(spec, opts) {
  ensureReady();
  const options = specOptions(opts);
  try {
    return { valid: true, ...JSON.parse(raw.validate(str(spec, 'spec'), options)) };
  } catch (e) {
    const error = fromThrown(e);
    if (error.code === 'internal') throw error;
    return { valid: false, error };
  }
}

/** The IANA tz database version bundled into the wasm, e.g. `2025b`. */
export function tzdbVersion() {
  ensureReady();
  return raw.tzdbVersion();
}

/**
 * The core's snapshot cadence (`chime_core::host::snapshot_due`), the same
 * rule as the native driver's: once `entries` journal lines reach `every`,
 * in a quiet moment (the engine's next deadline `slackMs` away is at least
 * twice the last snapshot's `costMs`; `null`/`undefined`: nothing
 * pending); at 4 × `every` lines, at once; but never sooner than 9 × the
 * last snapshot's cost after it ended (`sinceMs` ago; omitted: long ago),
 * so snapshots take at most a tenth of the time however large the state.
 */
export function snapshotDue(entries, every, slackMs, costMs, sinceMs) {
  ensureReady();
  return raw.snapshotDue(entries, every, slackMs ?? undefined, costMs, sinceMs ?? undefined);
}

/** The core's default `every` of `snapshotDue` (10,000 journal lines). */
export function snapshotEvery() {
  ensureReady();
  return raw.snapshotEvery();
}

/** How often a job leased for `leaseMs` is heartbeaten: a third of it, at least 1 ms. */
export function heartbeatPeriodMs(leaseMs) {
  ensureReady();
  return raw.heartbeatPeriodMs(leaseMs);
}

// Packed drains (../src/packed.rs): records of numbers, strings as
// (start, length) ranges of one text. Builds exactly the objects
// JSON.parse of the JSON form would (tests/packed.test.mjs checks).
const FIRE = 0;
const ENQUEUE = 1;
const JSON_TEXT = 2;
let reasons;
let memory;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function unpack(text, nums, count) {
  const out = new Array(count);
  let n = 0;
  // A fire's Enqueue repeats its id, and a run of commands names one
  // queue: the same ranges, so the same strings.
  let idStart = -1;
  let id = '';
  let queueStart = -1;
  let queue = '';
  const str = (start, len) => text.slice(start, start + len);
  const sameId = (start, len) => {
    if (start !== idStart) {
      idStart = start;
      id = str(start, len);
    }
    return id;
  };
  const sameQueue = (start, len) => {
    if (start !== queueStart) {
      queueStart = start;
      queue = str(start, len);
    }
    return queue;
  };
  for (let i = 0; i < nums.length; ) {
    const tag = nums[i];
    if (tag === FIRE) {
      const fireId = sameId(nums[i + 1], nums[i + 2]);
      const job = nums[i + 12];
      out[n++] = {
        fire: {
          fireId,
          schedule: fireId.slice(0, nums[i + 3]),
          version: nums[i + 4],
          nominal: nums[i + 5],
          dueAt: nums[i + 6],
          firedAt: nums[i + 7],
          reason: reasons[nums[i + 8]],
          epoch: nums[i + 9],
          queue: sameQueue(nums[i + 10], nums[i + 11]),
          job: job < 0 ? null : job,
        },
      };
      i += 13;
    } else if (tag === ENQUEUE) {
      const fire = sameId(nums[i + 1], nums[i + 2]);
      const payloadLen = nums[i + 6];
      const headersLen = nums[i + 8];
      out[n++] = {
        enqueue: {
          fire,
          queue: sameQueue(nums[i + 3], nums[i + 4]),
          payload: payloadLen < 0 ? null : JSON.parse(str(nums[i + 5], payloadLen)),
          key: fire,
          headers: headersLen < 0 ? {} : JSON.parse(str(nums[i + 7], headersLen)),
          epoch: nums[i + 9],
        },
      };
      i += 10;
    } else if (tag === JSON_TEXT) {
      out[n++] = JSON.parse(str(nums[i + 1], nums[i + 2]));
      i += 3;
    } else {
      throw new ChimeError('internal', `internal: unknown packed command tag ${tag}`);
    }
  }
  return out;
}

/** `freed`: a method of an Engine or Spec called after its `free()`. */
function freed(what) {
  return new ChimeError('freed', `freed: this ${what} was freed (free() was called)`);
}

/**
 * The raw sans-I/O engine: `handle(now, input)` mutates, `drain()` returns
 * every pending command, `pollTimeout()` says when to call
 * `handle(t, 'advance')` next. It never reads a clock or sets a timer.
 */
export class Engine {
  #raw;

  /** @param config EngineConfig (seed, standalone, limits, …), all optional. */
  constructor(config) {
    if (config instanceof raw.RawEngine) {
      this.#raw = config;
      return;
    }
    ensureReady();
    if (config !== undefined && config !== null && typeof config !== 'object') throw invalidInput('config', 'expected an EngineConfig object');
    this.#raw = call(() => new raw.RawEngine(config ? JSON.stringify(config) : ''));
  }

  /** The live raw engine, or `freed`. */
  get #r() {
    if (this.#raw === null) throw freed('Engine');
    return this.#raw;
  }

  /** Applies one input at `now` (ms or Date); returns the reply. */
  handle(now, input) {
    return this.handleJson(now, encodeInput(input));
  }

  /** `handle` with the input already as JSON text (what a journal stores). */
  handleJson(now, inputJson) {
    const ms = toMs(now);
    str(inputJson, 'input');
    const r = this.#r;
    return JSON.parse(call(() => r.handle(ms, inputJson)));
  }

  /**
   * Pending commands, oldest first, as plain objects: all of them, or at
   * most `max` (a host that handles a large advance in bounded chunks
   * keeps fewer objects alive at once). Three calls into wasm per drain,
   * however many commands.
   */
  drain(max = 0xffffffff) {
    const r = this.#r;
    reasons ??= JSON.parse(raw.fireReasons());
    const n = call(() => r.drainPacked(max));
    if (n === 0) return [];
    const [textAt, textLen, numsAt, numsLen] = r.packedLayout();
    const { buffer } = (memory ??= raw.wasmMemory());
    const text = utf8.decode(new Uint8Array(buffer, textAt, textLen));
    return unpack(text, new Float64Array(buffer, numsAt, numsLen), n);
  }

  /** Every pending command as the JSON text of the golden traces. */
  drainJson() {
    return this.#r.drainJson();
  }

  /** When `handle(t, 'advance')` next has work (ms), or null. */
  pollTimeout() {
    return this.#r.pollTimeout() ?? null;
  }

  get clock() { return this.#r.clock; }
  get isLeader() { return this.#r.isLeader; }
  /** A stop began (`stop`) and no `recover` ended it: nothing fires. */
  get isStopping() { return this.#r.isStopping; }
  get config() { return JSON.parse(this.#r.config); }
  get scheduleCount() { return this.#r.scheduleCount; }
  get liveJobs() { return this.#r.liveJobs; }
  get pendingCommands() { return this.#r.pendingCommands; }
  /** A schedule's definition, state and counters, or undefined. */
  schedule(name) { const r = this.#r; return parseOpt(call(() => r.schedule(str(name, 'name')))); }
  scheduleNames() { return JSON.parse(this.#r.scheduleNames()); }
  queueStats(queue) { const r = this.#r; return parseOpt(call(() => r.queueStats(str(queue, 'queue')))); }
  queueNames() { return JSON.parse(this.#r.queueNames()); }
  deadLetters(queue, limit = 100) { const r = this.#r; return JSON.parse(call(() => r.deadLetters(str(queue, 'queue'), limit))); }
  job(id) { const r = this.#r; return parseOpt(call(() => r.job(id))); }

  /** Canonical snapshot JSON (drain first: pending commands are not in it). */
  snapshot() {
    return this.#r.snapshot();
  }

  /**
   * What the restore that made this engine moved: one `TzRuleChange` per
   * zoned boundary the bundled tz database puts at another instant than
   * the snapshot's did (also emitted as `tz_rules_changed` events); `[]`
   * for an engine not restored, or restored under the same release.
   */
  restoredTzChanges() { return JSON.parse(this.#r.restoredTzChanges()); }

  /** An engine from `snapshot()` JSON. */
  static restore(snapshot) {
    ensureReady();
    return new Engine(call(() => raw.RawEngine.restore(str(snapshot, 'snapshot'))));
  }

  /**
   * Restores `snapshot` (null: a new default engine) and replays `journal`
   * (JSON Lines of `{now, input}`), returning the engine, every command
   * emitted, and each entry's `{ok}` or `{error}`.
   */
  static replay(snapshot, journal) {
    ensureReady();
    if (snapshot !== null && snapshot !== undefined) str(snapshot, 'snapshot');
    str(journal, 'journal');
    const out = call(() => raw.RawEngine.replay(snapshot ?? '', journal));
    try {
      return {
        engine: new Engine(out.takeEngine()),
        commands: JSON.parse(out.commands),
        replies: JSON.parse(out.replies).map((r) => (r.error ? { error: new ChimeError(r.error.code, r.error.message, r.error.field ?? undefined) } : r)),
      };
    } finally {
      out.free();
    }
  }

  /** Frees the wasm memory now instead of at garbage collection; later calls throw `freed`. */
  free() {
    if (this.#raw === null) return;
    const r = this.#raw;
    this.#raw = null;
    r.free();
  }
}

/** One journal line (without newline) for `handle(now, input)`. */
export function journalLine(now, inputJson) {
  return `{"now":${toMs(now)},"input":${inputJson}}`;
}

/**
 * A spec parsed once, for many occurrences: `next(after)` per instant, or
 * `nextTimes(after, count)` for a whole run as a Float64Array.
 */
export class Spec {
  #raw;
  /** @param opts `{tz, dst, minIntervalMs, horizonYears}` */
  constructor(spec, opts = {}) {
    ensureReady();
    str(spec, 'spec');
    if (typeof opts !== 'object' || opts === null) throw invalidInput('options', 'expected an object');
    this.#raw = call(() => new raw.RawSpec(spec, JSON.stringify(opts)));
  }
  get #r() {
    if (this.#raw === null) throw freed('Spec');
    return this.#raw;
  }
  /** The first occurrence strictly after `after` (ms or Date), or null. */
  next(after) {
    const r = this.#r;
    const ms = toMs(after, 'after');
    return call(() => r.next(ms)) ?? null;
  }
  /** Up to `count` successive occurrences after `after` (at most 1,000,000). */
  nextTimes(after, count) {
    const r = this.#r;
    const ms = toMs(after, 'after');
    return call(() => r.nextTimes(ms, count));
  }
  /** Like `preview`: civil time, offset and DST note per occurrence. */
  preview(after, count = 10) {
    const r = this.#r;
    const ms = toMs(after, 'after');
    return JSON.parse(call(() => r.preview(ms, count)));
  }
  get zone() { return this.#r.zone; }
  get fixedTime() { return this.#r.fixedTime; }
  /** Frees the wasm memory now; later calls throw `freed`. */
  free() {
    if (this.#raw === null) return;
    const r = this.#raw;
    this.#raw = null;
    r.free();
  }
}
