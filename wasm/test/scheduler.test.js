// The Scheduler driver in virtual time (VirtualClock), and one real-timer test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler, VirtualClock, MemoryStore, Engine, snapshotDue, snapshotEvery, heartbeatPeriodMs } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);

test('cron one-liner: handlers run on each boundary; the timer follows pollTimeout', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  await s.start();
  const seen = [];
  await s.cron('tick', '*/10 * * * * *', { payload: { hello: 'world' } }, async (job) => {
    seen.push([clock.now(), job.fire, job.attempt, job.payload.hello]);
  });
  await clock.advance(35_000);
  assert.deepEqual(seen, [10, 20, 30].map((sec) => [T0 + sec * 1000, `tick@${T0 + sec * 1000}`, 1, 'world']));
  const info = s.engine.schedule('tick');
  assert.equal(info.fires, 3);
  assert.equal(s.engine.queueStats('tick').totals.completed, 3);
  await s.stop();
});

test('concurrency limit per queue; overlap allow lets fires queue up', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  await s.start();
  let running = 0;
  let peak = 0;
  const done = [];
  s.worker('work', async (job) => {
    running += 1;
    peak = Math.max(peak, running);
    await new Promise((r) => clock.setTimeout(r, 5_000));
    running -= 1;
    done.push(job.payload);
  }, { concurrency: 2 });
  for (let i = 0; i < 5; i++) await s.enqueue('work', i);
  await clock.advance(60_000);
  assert.equal(peak, 2);
  assert.deepEqual(done.sort(), [0, 1, 2, 3, 4]);
  await s.stop();
});

test('a failing handler is retried with the next attempt, then dead-lettered', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  await s.start();
  await s.handle({ declareQueue: { name: 'flaky', maxAttempts: 3, backoff: { baseMs: 1000, capMs: 1000 } } });
  const attempts = [];
  s.worker('flaky', async (job) => {
    attempts.push(job.attempt);
    throw new Error(`boom ${job.attempt}`);
  });
  const { job } = await s.enqueue('flaky', { n: 1 });
  await clock.advance(10_000);
  assert.deepEqual(attempts, [1, 2, 3]);
  const info = s.engine.job(job);
  assert.equal(info.state, 'dead');
  assert.equal(info.lastError, 'boom 3');
  await s.stop();
});

test('run history: each fire with its outcome, attempts, duration and error, newest first', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  await s.start();
  await s.handle({ declareQueue: { name: 'nightly', maxAttempts: 2, backoff: { baseMs: 1000, capMs: 1000 } } });
  let calls = 0;
  await s.every('nightly', '10s', async () => {
    calls += 1;
    if (calls === 1) throw new Error('boom');
  });
  await clock.advance(20_000);
  const runs = s.runs('nightly');
  assert.equal(runs.length, 2, JSON.stringify(runs));
  assert.deepEqual(runs.map((r) => [r.nominal, r.reason, r.outcome, r.attempts]), [
    [T0 + 20_000, 'scheduled', 'completed', 1],
    [T0 + 10_000, 'scheduled', 'completed', 2],
  ]);
  assert.equal(runs[1].error, 'boom');
  assert.equal(runs[1].fire, `nightly@${T0 + 10_000}`);
  assert.equal(runs[1].durationMs, runs[1].finishedAt - runs[1].startedAt);
  assert.deepEqual(s.engine.schedule('nightly').runs, runs);
  assert.deepEqual(s.runs('nope'), []);
  await s.stop();
});

test('per-job timeout aborts the signal and fails the attempt; heartbeats keep a long job', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  await s.start();
  await s.handle({ declareQueue: { name: 'slow', leaseMs: 3000, maxAttempts: 1 } });
  await s.handle({ declareQueue: { name: 'long', leaseMs: 3000 } });
  let aborted = null;
  s.worker('slow', (job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => { aborted = job.signal.reason; reject(job.signal.reason); })), { timeoutMs: 2000 });
  const { job: slow } = await s.enqueue('slow', null);
  let finished = false;
  s.worker('long', async () => {
    // Five leases long: only heartbeats (every lease/3) keep it.
    await new Promise((r) => clock.setTimeout(r, 15_000));
    finished = true;
  });
  const { job: long } = await s.enqueue('long', null);
  await clock.advance(2500);
  assert.equal(aborted?.code, 'timeout');
  assert.equal(s.engine.job(slow).state, 'dead');
  await clock.advance(20_000);
  assert.equal(finished, true);
  const info = s.engine.job(long);
  assert.equal(info.state, 'completed');
  assert.equal(info.attempt, 1, 'the lease never expired');
  await s.stop();
});

test("host rules are the core's: the snapshot cadence and the heartbeat period", () => {
  // chime_core::host, the native driver's rules too.
  assert.equal(snapshotEvery(), 10_000);
  assert.equal(snapshotDue(9, 10, null, 0), false, 'not before `every`');
  assert.equal(snapshotDue(10, 10, null, 50), true, 'nothing pending: at once');
  assert.equal(snapshotDue(10, 10, undefined, 50), true);
  assert.equal(snapshotDue(10, 10, 100, 50), false, 'a deadline closer than twice the cost');
  assert.equal(snapshotDue(10, 10, 101, 50), true);
  assert.equal(snapshotDue(39, 10, -5, 0), false, 'a backlog defers it');
  assert.equal(snapshotDue(40, 10, -5, 0), true, '…up to 4 × every');
  assert.equal(snapshotDue(40, 10, -5, 300, 2_699), false, 'not within 9 × its cost of the last one');
  assert.equal(snapshotDue(10, 10, null, 300, 2_700), true);
  assert.equal(snapshotDue(40, 10, -5, 300, undefined), true, 'sinceMs omitted: long ago');
  assert.equal(heartbeatPeriodMs(60_000), 20_000);
  assert.equal(heartbeatPeriodMs(2), 1);
  assert.equal(heartbeatPeriodMs(-7), 1);
});

test('persistence: a new scheduler on the same store resumes where the last stopped', async () => {
  const clock = new VirtualClock(T0);
  const store = new MemoryStore();
  const a = new Scheduler({ clock, store, snapshotEvery: 5 });
  await a.start();
  const seen = [];
  const fn = async (job) => seen.push(job.fire);
  await a.cron('min', '0 * * * * *', { overlap: 'allow' }, fn);
  await clock.advance(3 * 60_000);
  await a.stop();
  assert.ok(store.snapshot, 'compacted at least once');
  // Down for 5 minutes: the next start catches up on the missed boundaries.
  await clock.advance(5 * 60_000);
  const b = new Scheduler({ clock, store });
  b.worker('min', fn);
  await b.start();
  await clock.advance(1000);
  assert.deepEqual(seen, [1, 2, 3, 4, 5, 6, 7, 8].map((m) => `min@${T0 + m * 60_000}`));
  assert.equal(new Set(seen).size, seen.length);
  // The store's journal replays to the live engine's state.
  const replayed = Engine.replay(store.snapshot, store.lines.join('\n') + '\n').engine;
  assert.equal(replayed.snapshot(), b.engine.snapshot());
  await b.stop();
});

test('stop({graceMs}) waits for running jobs; the next start runs the rest again at once', async () => {
  const clock = new VirtualClock(T0);
  const store = new MemoryStore();
  const a = new Scheduler({ clock, store });
  await a.start();
  await a.handle({ declareQueue: { name: 'q', leaseMs: 5000 } });
  let release;
  const gate = new Promise((r) => (release = r));
  const seen = [];
  a.worker('q', async (job) => {
    seen.push([job.payload, job.attempt]);
    if (job.payload === 'slow') await gate;
    if (job.payload === 'graceful') await new Promise((r) => setTimeout(r, 50)); // real time
  }, { concurrency: 3 });
  await a.enqueue('q', 'fast');
  await a.enqueue('q', 'slow');
  await a.enqueue('q', 'graceful');
  await clock.advance(10);
  const t = Date.now();
  await a.stop({ graceMs: 200 });
  assert.ok(Date.now() - t >= 150, 'waited for the grace period');
  release(); // finishes after the stop: its completion is not applied
  const b = new Scheduler({ clock, store });
  b.worker('q', async (job) => seen.push([job.payload, job.attempt]));
  await b.start();
  // 'graceful' finished within the grace period: completed, not retried.
  // 'slow' was cut off: interrupted, and run again at once under the same
  // attempt number (no lease expiry, no backoff).
  await clock.advance(10);
  assert.deepEqual(seen, [['fast', 1], ['slow', 1], ['graceful', 1], ['slow', 1]]);
  assert.equal(b.engine.queueStats('q').totals.completed, 3);
  assert.equal(b.engine.queueStats('q').totals.interrupted, 1);
  await b.stop();
});

test('refused inputs: journaled when the engine saw them, never when they did not parse', async () => {
  const clock = new VirtualClock(T0);
  const store = new MemoryStore();
  const a = new Scheduler({ clock, store });
  await a.start();
  await assert.rejects(a.handle({ noSuchInput: {} }), (e) => e.code === 'invalid_input' && e.field === 'input');
  await assert.rejects(a.handle({ enqueue: { queue: 'q', colour: 'red' } }), (e) => e.code === 'invalid_input');
  await clock.advance(1000);
  await assert.rejects(a.handle({ triggerSchedule: { name: 'ghost' } }), (e) => e.code === 'unknown_schedule');
  await a.stop();
  // `recover` (every start's first input), the refused trigger, `stop`.
  assert.equal(store.lines.length, 3, store.lines.join('\n'));
  assert.match(store.lines[0], /"input":"recover"/);
  assert.match(store.lines[1], /ghost/);
  assert.match(store.lines[2], /"input":"stop"/);
  // The journal still loads, and replays the refusal (and its advance).
  const b = new Scheduler({ clock, store });
  await b.start();
  assert.equal(b.engine.clock, T0 + 1000);
  await b.stop();
});

test('a failed append stops the scheduler: nothing that is not durable is acted on', async () => {
  const clock = new VirtualClock(T0);
  const store = new MemoryStore();
  let full = false;
  const append = store.append.bind(store);
  store.append = (lines) => {
    if (full) throw new Error('disk full');
    append(lines);
  };
  const errors = [];
  const s = new Scheduler({ clock, store, onError: (e) => errors.push(e) });
  await s.start();
  const ran = [];
  s.worker('q', async (job) => ran.push(job.payload));
  await s.enqueue('q', 1);
  await clock.advance(10);
  full = true;
  await assert.rejects(s.enqueue('q', 2), /disk full/);
  await clock.advance(1000);
  assert.deepEqual(ran, [1]);
  assert.equal(errors.length, 1);
  // Even once the disk has room again, nothing more is appended: the
  // journal would lack the failed input and replay to another state.
  full = false;
  await assert.rejects(s.enqueue('q', 3), /disk full/);
  assert.equal(store.lines.filter((l) => l.includes('"enqueue"')).length, 1);
  // A new start reloads what is durable and goes on from there.
  await s.stop({ graceMs: 0 });
  const again = new Scheduler({ clock, store });
  again.worker('q', async (job) => ran.push(job.payload));
  await again.start();
  await again.enqueue('q', 4);
  await clock.advance(10);
  assert.deepEqual(ran, [1, 4]);
  await again.stop();
});

test('real timers: @every 1s fires at least 3 times within 5 s', async () => {
  const s = new Scheduler();
  await s.start();
  const at = [];
  await s.cron('heartbeat', '@every 1s', async () => {
    at.push(Date.now());
  });
  const t = Date.now();
  while (at.length < 3 && Date.now() - t < 5000) await new Promise((r) => setTimeout(r, 50));
  await s.stop();
  assert.ok(at.length >= 3, `fired ${at.length} times`);
  assert.ok(at[2] - t <= 5000);
  // Each fire runs close to its whole-second boundary.
  for (const x of at) assert.ok(x % 1000 < 500, `late by ${x % 1000} ms`);
});
