// Types of the JS API shared by every entry (node, browser, init). The wire
// types (inputs, replies, commands, events, definitions) are generated from
// the Rust types into ./types/wire.d.ts by `scripts/build-wasm.sh` (ts-rs,
// core feature `ts`), so they cannot drift; `Command` and `Reply` are
// re-declared here so that `if (cmd.fire)` narrows (see `Exclusive`).
// index.d.ts (node: adds FileStore), index.browser.d.ts and index.init.d.ts
// (adds init) re-export this file.
import type {
  CancelReason,
  Claimed,
  Command as WireCommand,
  DstNote,
  DstPolicy,
  EngineConfig,
  Headers,
  EnqueueRequest,
  FireReason,
  Input,
  JobInfo,
  QueueStats,
  Reply as WireReply,
  ScheduleDef,
  RunRecord,
  ScheduleInfo,
  SkipReason,
  TzRuleChange,
} from './types/wire.js';

export type * from './types/wire.js';

/** Milliseconds since the Unix epoch, or a Date. Outputs are always numbers. */
export type TimeIn = number | Date;

/** The wire fields that hold instants (`js/core.js` sends a Date there as ms). */
type TimeKey = 'now' | 'runAt' | 'startAt' | 'endAt' | 'from' | 'to' | 'retryAt' | 'before' | 'validUntil';
type DateIn<T> = T extends object ? { [K in keyof T]: K extends TimeKey ? T[K] | Date : DateIn<T[K]> } : T;
/** An input with `Date`s allowed where the wire has a timestamp. */
export type InputIn = DateIn<Input>;

/**
 * A union of single-key objects where every member also declares the other
 * members' keys as absent (`?: undefined`), so a plain property test
 * narrows: `if (cmd.fire) cmd.fire.fireId`. (`'fire' in cmd` no longer
 * narrows, since every member has every key, optionally.) String members
 * (`"advanced"`) are kept as they are.
 */
export type Exclusive<U, K extends PropertyKey = U extends object ? keyof U : never> = U extends object
  ? U & { [P in Exclude<K, keyof U>]?: undefined }
  : U;

/** A command from `drain()`: test it with `if (cmd.fire)`, `if (cmd.enqueue)`, … */
export type Command = Exclusive<WireCommand>;
/** Any reply; `Engine.handle` returns the specific one for each kind of input. */
export type Reply = Exclusive<WireReply>;

/** The reply tag for each input tag (as `Engine.handle` in the core). */
export interface ReplyKinds {
  advance: 'advanced';
  declareQueue: 'queueDeclared';
  upsertSchedule: 'scheduleUpserted';
  removeSchedule: 'scheduleRemoved';
  pauseSchedule: 'scheduleStatus';
  resumeSchedule: 'scheduleStatus';
  triggerSchedule: 'triggered';
  backfill: 'backfilled';
  fireSettled: 'fireSettled';
  leadership: 'leadership';
  enqueue: 'enqueued';
  claim: 'claimed';
  heartbeat: 'leaseExtended';
  complete: 'job';
  fail: 'job';
  cancelJob: 'job';
  redrive: 'count';
  purgeDead: 'count';
  acquireLease: 'lease';
  renewLease: 'lease';
  releaseLease: 'leaseReleased';
  recover: 'recovered';
  stop: 'stopping';
  enqueueOutbox: 'enqueued';
}
export type InputKind = keyof ReplyKinds;
/** The tags of a wire union: its strings and its objects' keys. */
type Tags<U> = U extends string ? U : U extends object ? keyof U : never;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** ReplyKinds names every input tag and only reply tags (a compile error here when the wire drifts). */
type ReplyKindsMatchWire = Assert<Same<InputKind, Tags<Input>>> | Assert<Same<ReplyKinds[InputKind], Tags<WireReply>>>;
/** The input of one kind, with `Date`s allowed in time fields. */
export type InputOf<K extends InputKind> = Extract<InputIn, K | { [P in K]: unknown }>;
/** The reply to an input of kind `K`. */
export type ReplyOf<K extends InputKind> = Extract<WireReply, ReplyKinds[K] | { [P in ReplyKinds[K]]: unknown }>;

/**
 * Every error the package throws or rejects with. `code` is stable (the
 * list is in docs/javascript.md, "Errors"): the engine's (`invalid_spec`,
 * `unknown_schedule`, `lease_lost`, …) and the package's own
 * (`invalid_input` for a wrong argument, `freed`, `not_initialized`,
 * `init_failed`, `not_started`, `internal`).
 */
export class ChimeError extends Error {
  constructor(code: string, message: string, field?: string, options?: { cause?: unknown });
  readonly name: 'ChimeError';
  /** Stable machine-readable code, e.g. `invalid_spec`, `lease_lost`. */
  readonly code: string;
  /** The input field concerned (camelCase), when there is one. */
  readonly field?: string;
  /** `store_locked`: the pid of the process holding the directory. */
  readonly pid?: number;
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
 * `costMs`; `null`: nothing pending), or at 4 × `every` at once; but
 * never sooner than 9 × `costMs` after the last snapshot ended, `sinceMs`
 * ago (omitted: long ago): snapshots take at most a tenth of the time.
 */
export function snapshotDue(entries: number, every: number, slackMs: number | null | undefined, costMs: number, sinceMs?: number): boolean;
/** The default `every` of `snapshotDue` and of `SchedulerOptions.snapshotEvery` (10,000). */
export function snapshotEvery(): number;
/** How often a job leased for `leaseMs` is heartbeaten: a third of the lease, at least 1 ms. */
export function heartbeatPeriodMs(leaseMs: number): number;
/** Options of `new Spec(spec, opts)`: `SpecQuery` without `from`/`count`. */
export type SpecOptions = Omit<SpecQuery, 'from' | 'count'>;

/**
 * A spec parsed once, for many occurrences: `next(after)` per instant, or
 * `nextTimes(after, count)` for a whole run.
 */
export class Spec {
  constructor(spec: string, opts?: SpecOptions);
  /** The first occurrence strictly after `after`, or null (never again). */
  next(after: TimeIn): number | null;
  /** Up to `count` successive occurrences after `after` (at most 1,000,000). */
  nextTimes(after: TimeIn, count: number): Float64Array;
  /** Like `preview`: civil time, offset and DST note per occurrence. */
  preview(after: TimeIn, count?: number): Occurrence[];
  /** The IANA zone the spec is evaluated in. */
  readonly zone: string;
  /** True for a spec with fixed wall-clock times (cron), false for `@every`. */
  readonly fixedTime: boolean;
  /** Frees the wasm memory now; later calls throw ChimeError `freed`. */
  free(): void;
}

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
  /** Applies one input at `now` (ms or Date); returns the reply for that kind of input. */
  handle(now: TimeIn, input: InputOf<'advance'>): ReplyOf<'advance'>;
  handle(now: TimeIn, input: InputOf<'declareQueue'>): ReplyOf<'declareQueue'>;
  handle(now: TimeIn, input: InputOf<'upsertSchedule'>): ReplyOf<'upsertSchedule'>;
  handle(now: TimeIn, input: InputOf<'removeSchedule'>): ReplyOf<'removeSchedule'>;
  handle(now: TimeIn, input: InputOf<'pauseSchedule'>): ReplyOf<'pauseSchedule'>;
  handle(now: TimeIn, input: InputOf<'resumeSchedule'>): ReplyOf<'resumeSchedule'>;
  handle(now: TimeIn, input: InputOf<'triggerSchedule'>): ReplyOf<'triggerSchedule'>;
  handle(now: TimeIn, input: InputOf<'backfill'>): ReplyOf<'backfill'>;
  handle(now: TimeIn, input: InputOf<'fireSettled'>): ReplyOf<'fireSettled'>;
  handle(now: TimeIn, input: InputOf<'leadership'>): ReplyOf<'leadership'>;
  handle(now: TimeIn, input: InputOf<'enqueue'>): ReplyOf<'enqueue'>;
  handle(now: TimeIn, input: InputOf<'claim'>): ReplyOf<'claim'>;
  handle(now: TimeIn, input: InputOf<'heartbeat'>): ReplyOf<'heartbeat'>;
  handle(now: TimeIn, input: InputOf<'complete'>): ReplyOf<'complete'>;
  handle(now: TimeIn, input: InputOf<'fail'>): ReplyOf<'fail'>;
  handle(now: TimeIn, input: InputOf<'cancelJob'>): ReplyOf<'cancelJob'>;
  handle(now: TimeIn, input: InputOf<'redrive'>): ReplyOf<'redrive'>;
  handle(now: TimeIn, input: InputOf<'purgeDead'>): ReplyOf<'purgeDead'>;
  handle(now: TimeIn, input: InputOf<'acquireLease'>): ReplyOf<'acquireLease'>;
  handle(now: TimeIn, input: InputOf<'renewLease'>): ReplyOf<'renewLease'>;
  handle(now: TimeIn, input: InputOf<'releaseLease'>): ReplyOf<'releaseLease'>;
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
  /** The zoned boundaries the restore that made this engine moved (another tz database release; also `tz_rules_changed` events); `[]` otherwise. */
  restoredTzChanges(): TzRuleChange[];
  static restore(snapshot: string): Engine;
  static replay(snapshot: string | null, journal: string): Replayed;
  /** Frees the wasm memory now; later calls throw ChimeError `freed`, a second free() does nothing. */
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
  /** The fire's grid boundary (ms); null for a job not made by a fire. */
  nominal: number | null;
  /**
   * When the fire was due (nominal plus jitter) and when it fired (ms);
   * null for a job not made by a fire, and for one whose fire this
   * scheduler did not see (made before the last snapshot of a restart).
   */
  dueAt: number | null;
  firedAt: number | null;
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

/** Options of `Scheduler.enqueue`: the wire's `enqueue` fields but `queue` and `payload`. */
export interface EnqueueOptions {
  /** Idempotency key: a live or recently finished job with it is returned instead. */
  key?: string;
  /** Not before this instant (exclusive with `delayMs`). */
  runAt?: TimeIn;
  /** Not before now + this many ms (exclusive with `runAt`). */
  delayMs?: number;
  /** Higher first (default 0). */
  priority?: number;
  /** Override of the queue's `maxAttempts`. */
  maxAttempts?: number;
  headers?: Headers;
}
/** EnqueueOptions names exactly the wire's optional fields (a compile error here when they drift). */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
type Assert<T extends true> = T;
type EnqueueOptionsMatchWire = Assert<SameKeys<EnqueueOptions, Omit<EnqueueRequest, 'queue' | 'payload'>>>;

/** `scheduler.on('fired', …)`: a schedule fired (also on external queues: `job` null). */
export interface FiredEvent {
  schedule: string;
  nominal: number;
  dueAt: number;
  firedAt: number;
  fireId: string;
  reason: FireReason;
  queue: string;
  /** The job it made in a local queue. */
  job: number | null;
}
/** Boundaries skipped: one per schedule, reason and advance. */
export interface SkippedEvent {
  schedule: string;
  reason: SkipReason;
  count: number;
  /** The first and last skipped boundary (ms). */
  first: number;
  last: number;
}
interface JobEventBase {
  job: number;
  queue: string;
  /** The fire that made the job, or null. */
  fire: string | null;
}
export interface CompletedEvent extends JobEventBase {
  attempt: number | null;
  /** From the handler's start to its end (clock ms); null when not run by this scheduler. */
  durationMs: number | null;
}
/** An attempt failed (a handler's error, a timeout, or `lease_expired`). */
export interface FailedEvent extends JobEventBase {
  attempt: number | null;
  durationMs: number | null;
  error: string;
  /** When it runs again; null when it does not (a `dead` or `dropped` follows). */
  retryAt: number | null;
}
export interface DeadEvent extends JobEventBase {
  /** The last attempt (as `attempts`: the attempts made). */
  attempt: number;
  attempts: number;
  /** Of the last attempt, when this scheduler ran it (else null). */
  durationMs: number | null;
  /** `exhausted` or `interrupted` (beyond `maxInterruptions`). */
  reason: string;
  /** The last failure text. */
  error: string | null;
}
export interface DroppedEvent extends JobEventBase {
  /** `exhausted`, `interrupted` or `dead_letter_limit`. */
  reason: string;
  error: string | null;
}
export interface CancelledEvent extends JobEventBase {
  reason: CancelReason;
}
/** A claimed attempt was cut short by a crash or a stop past its grace: it runs again under the same number. */
export interface InterruptedEvent extends JobEventBase {
  attempt: number;
  interruptions: number;
}
/** A listener threw (`source: 'listener'`, `event` its event) or persistence failed (the scheduler stopped). */
export interface ErrorEvent {
  error: unknown;
  source: 'listener' | 'persistence';
  event?: Exclude<SchedulerEventName, 'error'>;
}
/** The payload of each `Scheduler` event. */
export interface SchedulerEvents {
  fired: FiredEvent;
  skipped: SkippedEvent;
  completed: CompletedEvent;
  failed: FailedEvent;
  dead: DeadEvent;
  dropped: DroppedEvent;
  cancelled: CancelledEvent;
  interrupted: InterruptedEvent;
  error: ErrorEvent;
}
export type SchedulerEventName = keyof SchedulerEvents;
export type SchedulerListener<E extends SchedulerEventName> = (payload: SchedulerEvents[E]) => void | Promise<void>;

/** What `start()` did besides loading: the schedules `prune` removed. */
export interface StartResult {
  pruned: string[];
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
  /** Default of `start({ prune })` (default false). */
  prune?: boolean;
}

export class Scheduler {
  constructor(opts?: SchedulerOptions);
  /** For getters only; inputs go through `handle`. */
  readonly engine: Engine;
  /** Schedule `name`'s last runs, newest first (`engine.schedule(name).runs`); `[]` if unknown. */
  runs(name: string): RunRecord[];
  /**
   * Loads the store, releases the claims of the last run as interrupted
   * (`recover`), applies the `cron()`/`every()` declarations made so far,
   * with `prune` removes every other stored schedule, arms the timer.
   * A declaration the engine refuses rejects it, and nothing changes.
   */
  start(opts?: { prune?: boolean }): Promise<StartResult>;
  /** Listens to an event; emitted once the input behind it is durable. A throwing listener is reported via `error`. */
  on<E extends SchedulerEventName>(event: E, fn: SchedulerListener<E>): this;
  off<E extends SchedulerEventName>(event: E, fn: SchedulerListener<E>): this;
  /**
   * Nothing new fires or is claimed from the first moment (`stop`); running
   * handlers get `graceMs` (default 10 s); the rest are interrupted and run
   * again at the next start.
   */
  stop(opts?: { graceMs?: number }): Promise<void>;
  worker<P = unknown>(queue: string, fn: Handler<P>, opts?: WorkerOptions): this;
  /**
   * A schedule `name` whose fires run `fn` on a queue of the same name.
   * Before `start()` it declares the schedule (start applies it, and
   * `prune` keeps it) and resolves once start did; after, it applies it now.
   */
  cron<P = unknown>(name: string, spec: string, fn: Handler<P>): Promise<ReplyOf<'upsertSchedule'>>;
  cron<P = unknown>(name: string, spec: string, opts: CronOptions, fn: Handler<P>): Promise<ReplyOf<'upsertSchedule'>>;
  /** `cron(name, '@every …')`: `interval` in ms or a duration such as `15m`. */
  every<P = unknown>(name: string, interval: number | string, fn: Handler<P>): Promise<ReplyOf<'upsertSchedule'>>;
  every<P = unknown>(name: string, interval: number | string, opts: CronOptions, fn: Handler<P>): Promise<ReplyOf<'upsertSchedule'>>;
  enqueue(queue: string, payload: unknown, opts?: EnqueueOptions): Promise<{ job: number; deduplicated: boolean }>;
  /** Any engine input at the clock's now; resolves with the reply once durable. */
  handle(input: InputOf<'advance'>): Promise<ReplyOf<'advance'>>;
  handle(input: InputOf<'declareQueue'>): Promise<ReplyOf<'declareQueue'>>;
  handle(input: InputOf<'upsertSchedule'>): Promise<ReplyOf<'upsertSchedule'>>;
  handle(input: InputOf<'removeSchedule'>): Promise<ReplyOf<'removeSchedule'>>;
  handle(input: InputOf<'pauseSchedule'>): Promise<ReplyOf<'pauseSchedule'>>;
  handle(input: InputOf<'resumeSchedule'>): Promise<ReplyOf<'resumeSchedule'>>;
  handle(input: InputOf<'triggerSchedule'>): Promise<ReplyOf<'triggerSchedule'>>;
  handle(input: InputOf<'backfill'>): Promise<ReplyOf<'backfill'>>;
  handle(input: InputOf<'fireSettled'>): Promise<ReplyOf<'fireSettled'>>;
  handle(input: InputOf<'leadership'>): Promise<ReplyOf<'leadership'>>;
  handle(input: InputOf<'enqueue'>): Promise<ReplyOf<'enqueue'>>;
  handle(input: InputOf<'claim'>): Promise<ReplyOf<'claim'>>;
  handle(input: InputOf<'heartbeat'>): Promise<ReplyOf<'heartbeat'>>;
  handle(input: InputOf<'complete'>): Promise<ReplyOf<'complete'>>;
  handle(input: InputOf<'fail'>): Promise<ReplyOf<'fail'>>;
  handle(input: InputOf<'cancelJob'>): Promise<ReplyOf<'cancelJob'>>;
  handle(input: InputOf<'redrive'>): Promise<ReplyOf<'redrive'>>;
  handle(input: InputOf<'purgeDead'>): Promise<ReplyOf<'purgeDead'>>;
  handle(input: InputOf<'acquireLease'>): Promise<ReplyOf<'acquireLease'>>;
  handle(input: InputOf<'renewLease'>): Promise<ReplyOf<'renewLease'>>;
  handle(input: InputOf<'releaseLease'>): Promise<ReplyOf<'releaseLease'>>;
  handle(input: InputIn): Promise<Reply>;
}
