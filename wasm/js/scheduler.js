// Scheduler: the driver most users want around the raw Engine. It owns one
// timer, runs async handlers per queue, and makes every input durable
// before acting on it. It decides nothing about schedules or jobs: the
// engine does; this file only turns commands into I/O and I/O into inputs.
import { Engine, ChimeError, encodeInput, heartbeatPeriodMs, journalLine, snapshotDue, snapshotEvery } from './core.js';
import { invalidInput } from './errors.js';
import { eventsOf, fireNominal, EVENT_NAMES } from './scheduler-events.js';

/** setTimeout's largest delay; longer waits are re-armed on expiry. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The real clock: Date.now and the host's timers. */
export const systemClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h),
};

/**
 * A virtual clock for tests: time moves only through `advance`/`set`,
 * which run the due timers in time order and let the promises they start
 * settle between timers.
 */
export class VirtualClock {
  #now;
  #timers = new Map();
  #seq = 0;
  constructor(start = 0) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }
  now() {
    return this.#now;
  }
  setTimeout(fn, ms) {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), fn, id });
    return id;
  }
  clearTimeout(id) {
    this.#timers.delete(id);
  }
  /** Moves time forward by `ms`, firing every timer due on the way. */
  async advance(ms) {
    await this.set(this.#now + ms);
  }
  /** Moves time forward to `t` (ms), firing every timer due on the way. */
  async set(t) {
    await settle();
    for (;;) {
      let next = null;
      for (const timer of this.#timers.values()) {
        if (timer.at <= t && (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id))) next = timer;
      }
      if (!next) break;
      this.#timers.delete(next.id);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, t);
    await settle();
  }
}

/** The binding refused the JSON of the input or its `now`: nothing was applied. */
const unparsed = (e) => e.code === 'invalid_input' && (e.field === 'input' || e.field === 'now');

/** Lets every pending promise chain run (a few macrotask turns). */
async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => globalThis.setTimeout(r, 0));
}

/**
 * Persistence in memory: survives `stop()`/`start()` of a scheduler in the
 * same process, and shows the interface a durable store implements:
 * - `load()` → `{snapshot: string|null, journal: string}` (JSON Lines);
 * - `append(lines)`: durable when it returns (or its promise resolves);
 * - `compact(snapshot)`: replaces the snapshot and empties the journal, atomically;
 * - `shared` (optional): `true` when several schedulers may use the store at
 *   once. Otherwise a start releases every claim it finds as interrupted
 *   (their process is gone) and a stop is journaled (`recover`, `stop`).
 */
export class MemoryStore {
  snapshot = null;
  lines = [];
  load() {
    return { snapshot: this.snapshot, journal: this.lines.length ? this.lines.join('\n') + '\n' : '' };
  }
  append(lines) {
    this.lines.push(...lines);
  }
  compact(snapshot) {
    this.snapshot = snapshot;
    this.lines = [];
  }
}

/**
 * Runs an Engine for real: timers, handlers, persistence.
 *
 * Every input (timer advance, claim, heartbeat, complete, fail, and the
 * caller's own) is handled at once, appended to the journal, and acted on
 * only after the store says the journal is durable (one append per tick:
 * group commit). After a crash, `start()` restores the snapshot and replays
 * the journal, so nothing acknowledged is lost and nothing fires twice.
 */
export class Scheduler {
  #engine = null;
  #config;
  #store;
  #clock;
  #worker;
  #snapshotEvery;
  #onCommand;
  #onError;
  #handlers = new Map();
  #running = new Map(); // job id -> { abort, queue }
  #lines = [];
  #cmds = [];
  #commit = null; // the commit that will take #lines
  #tail = Promise.resolve(); // the last commit started
  #sinceSnapshot = 0;
  #snapshotCostMs = 0; // how long the last compaction took (real time)
  #snapshotEndedAt = performance.now(); // when it ended (real time)
  #timer = null;
  #armedAt = null;
  #started = false;
  #stopping = false;
  #failed = null; // the persistence error that stopped the scheduler
  #listeners = new Map(); // event name -> Set of listeners
  #events = []; // [name, payload] of this tick's commands, emitted once durable
  #fires = new Map(); // job id -> {nominal, dueAt, firedAt} of the fire that made it
  #finishing = new Map(); // job id -> {attempt, durationMs, error} of the attempt just ended here
  #declared = new Map(); // schedule name -> its upsertSchedule, from cron()/every()
  #waiting = []; // {name, resolve, reject} of cron()/every() calls made before start()
  #prune;

  /**
   * @param opts.config EngineConfig for a new engine (ignored when the store has state)
   * @param opts.store persistence (default: a MemoryStore)
   * @param opts.clock `{now, setTimeout, clearTimeout}` (default: the system clock)
   * @param opts.worker worker name recorded on claims (default `scheduler`)
   * @param opts.snapshotEvery journal entries before a snapshot, taken in a quiet
   *   moment, at 4× at once (`snapshotDue`; default `snapshotEvery()`, 10,000)
   * @param opts.onCommand observer of every command (fires, events, …)
   * @param opts.onError called when persistence fails (the scheduler stops)
   * @param opts.prune default of `start({prune})`: remove the stored schedules
   *   that no `cron()`/`every()` call declared before start
   */
  constructor(opts = {}) {
    this.#config = opts.config;
    this.#store = opts.store ?? new MemoryStore();
    this.#clock = opts.clock ?? systemClock;
    this.#worker = opts.worker ?? 'scheduler';
    this.#snapshotEvery = opts.snapshotEvery ?? snapshotEvery();
    this.#onCommand = opts.onCommand ?? (() => {});
    // Fail-stop: after a failed append nothing more is acted on.
    this.#onError = opts.onError ?? ((e) => console.error('chime: persistence failed, scheduler stopped:', e));
    this.#prune = opts.prune ?? false;
  }

  /**
   * Listens to `event` (`fired`, `skipped`, `completed`, `failed`, `dead`,
   * `dropped`, `cancelled`, `interrupted`, `error`). Emitted once the input
   * behind it is durable. A listener that throws (or rejects) is reported
   * through `error` (or console.error) and changes nothing else.
   */
  on(event, fn) {
    this.#listenersOf(event).add(fn);
    return this;
  }

  /** Removes a listener added with `on`. */
  off(event, fn) {
    this.#listenersOf(event).delete(fn);
    return this;
  }

  #listenersOf(event) {
    if (!EVENT_NAMES.includes(event)) throw invalidInput('event', `unknown event ${JSON.stringify(event)} (one of ${EVENT_NAMES.join(', ')})`);
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    return set;
  }

  #emit(event, payload) {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) {
      try {
        const r = fn(payload);
        if (r && typeof r.then === 'function') r.then(undefined, (e) => this.#listenerFailed(event, e));
      } catch (e) {
        this.#listenerFailed(event, e);
      }
    }
  }

  /** A listener threw: its own business, never the scheduler's. */
  #listenerFailed(event, error) {
    if (event !== 'error' && this.#listeners.get('error')?.size) this.#emit('error', { error, source: 'listener', event });
    else console.error(`chime: a '${event}' listener threw:`, error);
  }

  /** The engine, for getters (`schedule`, `queueStats`, …). Do not call `handle` on it. */
  get engine() {
    return this.#engine;
  }

  /**
   * Schedule `name`'s run history, newest first (`schedule(name).runs`:
   * at most `limits.runsPerSchedule`); `[]` for an unknown schedule.
   */
  runs(name) {
    return this.#engine.schedule(name)?.runs ?? [];
  }

  /**
   * Loads the store (snapshot + journal replay), applies the schedules
   * declared by `cron()`/`every()` so far, with `prune` removes every other
   * stored schedule, arms the timer, starts workers. Resolves with
   * `{pruned}`: the names removed. A declaration the engine refuses
   * rejects start (and its own call) and changes nothing.
   */
  async start({ prune = this.#prune } = {}) {
    if (this.#started) return { pruned: [] };
    const { snapshot, journal } = await this.#store.load();
    try {
      this.#load(snapshot, journal);
    } catch (e) {
      await this.#store.close?.();
      this.#settleWaiting(null, e);
      throw e;
    }
    this.#started = true;
    this.#stopping = false;
    this.#failed = null;
    for (const h of this.#handlers.values()) h.active = 0;
    this.#sinceSnapshot = journal ? journal.split('\n').length - 1 : 0;
    // A store with one owner (FileStore, MemoryStore) holds no live claim
    // at start: whoever claimed its jobs is gone. The core releases them
    // as interrupted and ends a stop the last run began (`recover`), as
    // the native daemon does; the first input of every start.
    if (!this.#store.shared) await this.#apply('recover').done;
    const replies = new Map();
    for (const [name, upsertSchedule] of this.#declared) replies.set(name, this.#apply({ upsertSchedule }));
    const pruned = [];
    if (prune) {
      for (const name of this.#engine.scheduleNames()) {
        if (this.#declared.has(name)) continue;
        this.#apply({ removeSchedule: { name } });
        pruned.push(name);
      }
    }
    try {
      await this.#scheduleCommit();
    } catch (e) {
      this.#settleWaiting(null, e);
      throw e;
    }
    this.#settleWaiting(replies, null);
    this.#arm();
    for (const queue of this.#handlers.keys()) this.#pump(queue);
    return { pruned };
  }

  /**
   * The engine of the stored state; the declarations checked on a copy of
   * it first, so that a refused one leaves the journal as it was.
   */
  #load(snapshot, journal) {
    this.#fires.clear();
    let engine;
    if (snapshot || journal) {
      // The replayed commands were acted on before the restart (or their
      // jobs are in the state, to be claimed again): only the state
      // matters, and the fires of the jobs still live (`job.dueAt`, …).
      const replayed = Engine.replay(snapshot, journal);
      engine = replayed.engine;
      for (const cmd of replayed.commands) eventsOf(cmd, engine, this.#fires, this.#finishing);
    } else {
      engine = new Engine(this.#config);
    }
    if (this.#declared.size) {
      const copy = Engine.restore(engine.snapshot());
      try {
        const now = this.#clock.now();
        for (const upsertSchedule of this.#declared.values()) {
          try {
            copy.handleJson(now, encodeInput({ upsertSchedule }));
          } catch (e) {
            engine.free();
            throw e;
          }
          copy.drain();
        }
      } finally {
        copy.free();
      }
    }
    this.#engine = engine;
  }

  /** Settles the cron()/every() calls made before start. */
  #settleWaiting(replies, error) {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) {
      const r = replies?.get(w.name);
      if (r && !r.error) w.resolve(r.reply);
      else w.reject(r?.error ?? error ?? new ChimeError('not_started', 'start() failed'));
    }
  }

  /**
   * Stops: from its first moment nothing new fires or is claimed (the
   * core's `stop` input, journaled), then waits up to `graceMs` for
   * running handlers. Jobs still running after it are left claimed: the
   * next start releases them as interrupted (`recover`) and runs them
   * again at once, under the same attempt number (on a store with
   * `shared: true`, they wait for their lease expiry instead).
   */
  async stop({ graceMs = 10_000 } = {}) {
    if (!this.#started) return;
    // Before anything else: heartbeats and completions during the grace
    // period advance the engine, which must not fire meanwhile.
    if (!this.#failed && !this.#store.shared) {
      await this.#apply('stop').done.catch(() => {});
    }
    this.#stopping = true;
    this.#disarm();
    const deadline = Date.now() + graceMs;
    while (this.#running.size && Date.now() < deadline) {
      await new Promise((r) => globalThis.setTimeout(r, Math.min(20, graceMs)));
    }
    await this.#tail;
    for (const { abort } of this.#running.values()) abort(new ChimeError('stopped', 'the scheduler stopped'));
    this.#running.clear();
    this.#started = false;
    await this.#store.close?.();
  }

  /**
   * Handles jobs of `queue` with `fn(job)`: `job` has `id, queue, payload,
   * headers, attempt, fire, signal`. A resolved promise completes the job,
   * a rejection fails it (retried with backoff, then dead-lettered).
   * @param opts.concurrency most jobs running at once (default 1)
   * @param opts.timeoutMs abort `job.signal` and fail the attempt after this
   */
  worker(queue, fn, { concurrency = 1, timeoutMs } = {}) {
    this.#handlers.set(queue, { fn, concurrency, timeoutMs, active: 0 });
    if (this.#started) this.#pump(queue);
    return this;
  }

  /**
   * The one-liner: a schedule named `name` whose fires run `fn` on a queue
   * of the same name (or `opts.queue`). `opts` holds ScheduleDef fields
   * (`tz`, `dst`, `overlap`, `catchup`, `payload`, …) and worker options.
   */
  /**
   * Called before `start()`, it declares the schedule (applied by start,
   * which `prune` compares the store with) and resolves once start applied it.
   */
  cron(name, spec, opts, fn) {
    if (typeof opts === 'function') [opts, fn] = [{}, opts];
    const { queue = name, payload, concurrency, timeoutMs, ...def } = opts ?? {};
    if (typeof fn !== 'function') return Promise.reject(invalidInput('handler', 'the last argument must be the handler function'));
    this.worker(queue, fn, { concurrency, timeoutMs });
    const upsertSchedule = { ...def, name, spec, target: { queue, payload } };
    this.#declared.set(name, upsertSchedule);
    if (this.#started) return this.handle({ upsertSchedule });
    const p = new Promise((resolve, reject) => this.#waiting.push({ name, resolve, reject }));
    p.catch(() => {}); // start() rejects with the same error
    return p;
  }

  /** `cron(name, '@every <interval>', …)`: `interval` in ms or as a duration (`15m`, `1h30m`). */
  every(name, interval, opts, fn) {
    return this.cron(name, `@every ${typeof interval === 'number' ? `${interval}ms` : interval}`, opts, fn);
  }

  /** Adds a job; resolves with `{job, deduplicated}` once durable. */
  async enqueue(queue, payload, opts = {}) {
    const { enqueued } = await this.handle({ enqueue: { ...opts, queue, payload } });
    return enqueued;
  }

  /** Any engine input at the clock's now; resolves with the reply once durable. */
  async handle(input) {
    this.#check();
    const { reply, error, done } = this.#apply(input);
    await done;
    if (error) throw error;
    return reply;
  }

  #check() {
    if (this.#failed) throw this.#failed;
    if (!this.#started) throw new ChimeError('not_started', 'call start() first');
  }

  /** Handles an input now; its effects wait for `done` (durability). */
  #apply(input) {
    const json = encodeInput(input);
    const now = this.#clock.now();
    let reply;
    let error;
    try {
      reply = this.#engine.handleJson(now, json);
    } catch (e) {
      if (!(e instanceof ChimeError)) throw e;
      error = e;
    }
    // A refused input is history too (replay refuses it again, after the
    // same advance), except one the binding could not even parse: the
    // engine never saw it, and the journal reader would reject the line.
    if (!error || !unparsed(error)) this.#lines.push(journalLine(now, json));
    for (const cmd of this.#engine.drain()) {
      this.#cmds.push(cmd);
      // Built now, from the state just after this input; emitted once durable.
      for (const ev of eventsOf(cmd, this.#engine, this.#fires, this.#finishing)) this.#events.push(ev);
    }
    return { reply, error, done: this.#scheduleCommit() };
  }

  /** Group commit: every input of this tick goes out in one append. */
  #scheduleCommit() {
    if (this.#commit) return this.#commit;
    const commit = this.#tail.then(async () => {
      this.#commit = null; // later inputs join the next commit
      // After a failed append the engine holds inputs the journal lacks:
      // appending anything more would make a journal that replays to
      // another state. Restart (start() reloads the store) instead.
      if (this.#failed) throw this.#failed;
      const lines = this.#lines;
      const cmds = this.#cmds;
      const events = this.#events;
      this.#lines = [];
      this.#cmds = [];
      this.#events = [];
      try {
        if (lines.length) await this.#store.append(lines);
      } catch (e) {
        this.#fail(e);
        throw e;
      }
      this.#sinceSnapshot += lines.length;
      // Nothing handled since is waiting for durability: the snapshot
      // holds exactly what the journal says, so it may replace it. When:
      // the core's cadence, as the native driver's (a quiet moment, or
      // the bound).
      if (this.#lines.length === 0 && this.#snapshotDue()) {
        const started = performance.now();
        await this.#store.compact(this.#engine.snapshot());
        this.#snapshotEndedAt = performance.now();
        this.#snapshotCostMs = this.#snapshotEndedAt - started;
        this.#sinceSnapshot = 0;
      }
      for (const cmd of cmds) this.#execute(cmd);
      for (const [event, payload] of events) this.#emit(event, payload);
      this.#arm();
    });
    this.#commit = commit;
    this.#tail = commit.catch(() => {});
    return commit;
  }

  #snapshotDue() {
    const at = this.#engine.pollTimeout();
    const slackMs = at === null ? null : at - this.#clock.now();
    const sinceMs = performance.now() - this.#snapshotEndedAt;
    return snapshotDue(this.#sinceSnapshot, this.#snapshotEvery, slackMs, this.#snapshotCostMs, sinceMs);
  }

  #fail(e) {
    this.#failed = e;
    this.#stopping = true;
    this.#disarm();
    this.#onError(e);
    this.#emit('error', { error: e, source: 'persistence' });
  }

  #execute(cmd) {
    this.#onCommand(cmd);
    if (this.#stopping) return;
    if (cmd.wake) this.#pump(cmd.wake.queue);
    else if (cmd.cancel) this.#running.get(cmd.cancel.job)?.abort(new ChimeError('cancelled', `job ${cmd.cancel.job} cancelled: ${cmd.cancel.reason}`));
  }

  /** One timer at pollTimeout, re-armed only when that instant changes. */
  #arm() {
    if (this.#stopping || !this.#started) return;
    const at = this.#engine.pollTimeout();
    if (at === this.#armedAt) return;
    this.#disarm();
    if (at === null) return;
    this.#armedAt = at;
    const delay = Math.min(Math.max(0, at - this.#clock.now()), MAX_DELAY_MS);
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      this.#armedAt = null; // early or clamped wake-ups re-arm
      if (!this.#stopping) this.#apply('advance');
    }, delay);
  }

  #disarm() {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
    this.#armedAt = null;
  }

  /** Claims as many jobs as `queue` has free slots; runs them once durable. */
  #pump(queue) {
    const h = this.#handlers.get(queue);
    if (!h || this.#stopping || !this.#started) return;
    const free = h.concurrency - h.active;
    if (free <= 0) return;
    const { reply, done } = this.#apply({ claim: { queue, worker: this.#worker, max: free } });
    const jobs = reply?.claimed.jobs ?? [];
    h.active += jobs.length;
    done.then(() => {
      for (const job of jobs) this.#run(queue, h, job);
    }, () => {});
  }

  async #run(queue, h, claimed) {
    const { job, token, attempt, payload, headers, fire, deadline } = claimed;
    const ctl = new AbortController();
    const clock = this.#clock;
    this.#running.set(job, { abort: (why) => ctl.abort(why), queue });
    const periodMs = heartbeatPeriodMs(deadline - clock.now());
    let beat = null;
    const heartbeat = () => {
      beat = clock.setTimeout(() => {
        if (ctl.signal.aborted) return; // also beats during stop's grace period
        const { error } = this.#apply({ heartbeat: { job, token } });
        if (error) ctl.abort(error); // lease_lost: someone else may hold it now
        else heartbeat();
      }, periodMs);
    };
    heartbeat();
    const timeout = h.timeoutMs && clock.setTimeout(() => ctl.abort(new ChimeError('timeout', `job ${job} timed out after ${h.timeoutMs} ms`)), h.timeoutMs);
    let failure = null;
    const made = fire ? this.#fires.get(job) : undefined;
    const startedAt = clock.now();
    try {
      await Promise.race([
        h.fn({
          id: job,
          queue,
          payload,
          headers,
          attempt,
          fire,
          nominal: fire ? (made?.nominal ?? fireNominal(fire)) : null,
          dueAt: made?.dueAt ?? null,
          firedAt: made?.firedAt ?? null,
          signal: ctl.signal,
        }),
        new Promise((_, reject) => ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason), { once: true })),
      ]);
    } catch (e) {
      failure = e;
    } finally {
      if (beat !== null) clock.clearTimeout(beat);
      if (timeout) clock.clearTimeout(timeout);
    }
    // Not running any more: stop() gave up on it after the grace period;
    // the next start releases it as interrupted.
    if (!this.#running.delete(job)) return;
    h.active -= 1;
    // Within stop's grace period the outcome still counts.
    const durationMs = clock.now() - startedAt;
    if (failure === null) {
      this.#finishing.set(job, { attempt, durationMs, error: null });
      this.#apply({ complete: { job, token } });
    } else if (!(failure instanceof ChimeError && failure.code === 'lease_lost')) {
      const error = String(failure?.message ?? failure);
      this.#finishing.set(job, { attempt, durationMs, error });
      this.#apply({ fail: { job, token, error } });
    }
    this.#finishing.delete(job);
    this.#pump(queue);
  }
}
