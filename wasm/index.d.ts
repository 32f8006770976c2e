// Types of the JS API. The wire types (inputs, replies, commands, events,
// definitions) are generated from the Rust types into ./types/wire.d.ts by
// `scripts/build-wasm.sh` (ts-rs, core feature `ts`), so they cannot drift.
import type {
  Claimed,
  Command,
  DstNote,
  DstPolicy,
  EngineConfig,
  Headers,
  Input,
  JobInfo,
  QueueStats,
  Reply,
  ScheduleDef,
  ScheduleInfo,
} from './types/wire.js';

export type * from './types/wire.js';

/** Milliseconds since the Unix epoch, or a Date. Outputs are always numbers. */
export type TimeIn = number | Date;

/** The wire fields that hold instants (`js/core.js` sends a Date there as ms). */
type TimeKey = 'now' | 'runAt' | 'startAt' | 'endAt' | 'from' | 'to' | 'retryAt' | 'before' | 'validUntil';
type DateIn<T> = T extends object ? { [K in keyof T]: K extends TimeKey ? T[K] | Date : DateIn<T[K]> } : T;
/** An input with `Date`s allowed where the wire has a timestamp. */
export type InputIn = DateIn<Input>;

/** Refused input, bad spec, or malformed argument. */
export class ChimeError extends Error {
  constructor(code: string, message: string, field?: string);
  readonly name: 'ChimeError';
  /** Stable machine-readable code, e.g. `invalid_spec`, `lease_lost`. */
  readonly code: string;
  /** The input field concerned (camelCase), when there is one. */
  readonly field?: string;
}

export interface SpecQuery {
  /** IANA zone; default UTC (or the spec's `CRON_TZ=` prefix). */
  tz?: string;
  dst?: DstPolicy;
  /** Occurrences strictly after this instant; default now. */
  from?: TimeIn;
  /** How many; default 10, at most 10,000. */
  count?: number;
  minIntervalMs?: number;
  horizonYears?: number;
}

export interface Occurrence {
  at: number;
  /** Local civil time, e.g. `2026-03-08T03:00:00`. */
  civil: string;
  offsetSeconds: number;
  note: DstNote | null;
}

export type Validation =
  | { valid: true; zone: string; fixedTime: boolean; everyMs?: number; next: number }
  | { valid: false; error: ChimeError };

export function preview(spec: string, opts?: SpecQuery): Occurrence[];
export function validate(spec: string, opts?: SpecQuery): Validation;
export function tzdbVersion(): string;
/**
 * The core's snapshot cadence, shared with the native driver: due once
 * `entries` journal lines reach `every` in a quiet moment (the engine's
 * next deadline `slackMs` away is at least twice the last snapshot's
 * `costMs`; `null`: nothing pending), or at 4 × `every` at once.
 */
export function snapshotDue(entries: number, every: number, slackMs: number | null | undefined, costMs: number): boolean;
/** The default `every` of `snapshotDue` and of `SchedulerOptions.snapshotEvery` (10,000). */
export function snapshotEvery(): number;
/** How often a job leased for `leaseMs` is heartbeaten: a third of the lease, at least 1 ms. */
export function heartbeatPeriodMs(leaseMs: number): number;
export function toMs(t: TimeIn, field?: string): number;
/** An input as the JSON text the engine parses and a journal records. */
export function encodeInput(input: InputIn): string;
/** One journal line (no newline): `{"now":…,"input":…}`. */
export function journalLine(now: TimeIn, inputJson: string): string;

export interface Replayed {
  engine: Engine;
  commands: Command[];
  replies: Array<{ ok: Reply } | { error: ChimeError }>;
}

/** The raw sans-I/O engine; it never reads a clock or sets a timer. */
export class Engine {
  constructor(config?: Partial<EngineConfig>);
  handle(now: TimeIn, input: InputIn): Reply;
  handleJson(now: TimeIn, inputJson: string): Reply;
  /** Pending commands, oldest first: all of them, or at most `max`. */
  drain(max?: number): Command[];
  /** Every pending command as JSON text (the golden traces' form). */
  drainJson(): string;
  /** When `handle(t, 'advance')` next has work, or null. */
  pollTimeout(): number | null;
  readonly clock: number;
  readonly isLeader: boolean;
  /** A stop began (input `stop`) and no `recover` ended it: nothing fires meanwhile. */
  readonly isStopping: boolean;
  readonly config: EngineConfig;
  readonly scheduleCount: number;
  readonly liveJobs: number;
  readonly pendingCommands: number;
  schedule(name: string): ScheduleInfo | undefined;
  scheduleNames(): string[];
  queueStats(queue: string): QueueStats | undefined;
  queueNames(): string[];
  deadLetters(queue: string, limit?: number): JobInfo[];
  job(id: number): JobInfo | undefined;
  /** Canonical snapshot JSON. */
  snapshot(): string;
  static restore(snapshot: string): Engine;
  static replay(snapshot: string | null, journal: string): Replayed;
  free(): void;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}
export const systemClock: Clock;
export class VirtualClock implements Clock {
  constructor(start?: TimeIn);
  now(): number;
  setTimeout(fn: () => void, ms: number): number;
  clearTimeout(handle: unknown): void;
  advance(ms: number): Promise<void>;
  set(t: number): Promise<void>;
}

/** Persistence: snapshot + journal (JSON Lines of `{now, input}`). */
export interface Store {
  load(): { snapshot: string | null; journal: string } | Promise<{ snapshot: string | null; journal: string }>;
  /** Durable when it returns (or its promise resolves). */
  append(lines: string[]): void | Promise<void>;
  /** Replaces the snapshot and empties the journal, atomically. */
  compact(snapshot: string): void | Promise<void>;
  close?(): void | Promise<void>;
  /**
   * `true` when several schedulers may use the store at once. Otherwise
   * (the default, and FileStore and MemoryStore) a start releases every
   * claim it finds as interrupted, its process being gone (input
   * `recover`), and a stop is journaled (input `stop`).
   */
  readonly shared?: boolean;
}
export class MemoryStore implements Store {
  snapshot: string | null;
  lines: string[];
  load(): { snapshot: string | null; journal: string };
  append(lines: string[]): void;
  compact(snapshot: string): void;
}
/** Node only: snapshot.json + journal-<gen>.jsonl in `dir`, fsynced. */
export class FileStore implements Store {
  constructor(dir: string);
  load(): { snapshot: string | null; journal: string };
  append(lines: string[]): void;
  compact(snapshot: string): void;
  close(): void;
}

export interface Job<P = unknown> {
  id: number;
  queue: string;
  payload: P;
  headers: Headers;
  /**
   * 1-based; above 1 after a failure or a timeout. An attempt interrupted
   * by a crash or a stop past its grace period does not count: the job
   * runs again under the same number (up to the queue's `maxInterruptions`).
   */
  attempt: number;
  /** The fire that created the job, e.g. `backup@1767229200000`. */
  fire: Claimed['fire'];
  /** Aborted on timeout, cancellation, lost lease or stop. */
  signal: AbortSignal;
}
export type Handler<P = unknown> = (job: Job<P>) => unknown | Promise<unknown>;

export interface WorkerOptions {
  /** Most jobs of the queue running at once (default 1). */
  concurrency?: number;
  /** Abort `job.signal` and fail the attempt after this many ms. */
  timeoutMs?: number;
}

export type CronOptions = Partial<Omit<ScheduleDef, 'name' | 'spec' | 'target'>> &
  WorkerOptions & { queue?: string; payload?: unknown };

export interface SchedulerOptions {
  config?: Partial<EngineConfig>;
  store?: Store;
  clock?: Clock;
  worker?: string;
  /** Journal lines before a snapshot in a quiet moment, 4× at once (default `snapshotEvery()`). */
  snapshotEvery?: number;
  onCommand?: (cmd: Command) => void;
  onError?: (e: unknown) => void;
}

export class Scheduler {
  constructor(opts?: SchedulerOptions);
  /** For getters only; inputs go through `handle`. */
  readonly engine: Engine;
  /** Loads the store, releases the claims of the last run as interrupted (`recover`), arms the timer. */
  start(): Promise<void>;
  /**
   * Nothing new fires or is claimed from the first moment (`stop`); running
   * handlers get `graceMs` (default 10 s); the rest are interrupted and run
   * again at the next start.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  worker<P = unknown>(queue: string, fn: Handler<P>, opts?: WorkerOptions): this;
  cron<P = unknown>(name: string, spec: string, fn: Handler<P>): Promise<Reply>;
  cron<P = unknown>(name: string, spec: string, opts: CronOptions, fn: Handler<P>): Promise<Reply>;
  enqueue(queue: string, payload: unknown, opts?: Record<string, unknown>): Promise<{ job: number; deduplicated: boolean }>;
  handle(input: InputIn): Promise<Reply>;
}
