// The Scheduler's events API (field report, issue 22, item 6): typed
// `on`/`off` events built from the engine's commands, the job's fire times,
// a throwing listener that breaks nothing, and the declarative start
// (`cron()` before `start({ prune: true })` removes undeclared schedules).
// Virtual clocks, real wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler, MemoryStore, VirtualClock, ChimeError } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);
const sleep = (clock, ms) => new Promise((r) => clock.setTimeout(r, ms));

/** Records every event of `s` as `[name, payload]`. */
function record(s) {
  const log = [];
  for (const e of ['fired', 'skipped', 'completed', 'failed', 'dead', 'dropped', 'cancelled', 'interrupted', 'error']) s.on(e, (p) => log.push([e, p]));
  return log;
}
const of = (log, name) => log.filter(([e]) => e === name).map(([, p]) => p);

test('events: fired, failed (with retry time), completed and dead carry queue, attempt and handler duration', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  const log = record(s);
  const jobs = [];
  await s.start();
  await s.handle({ declareQueue: { name: 'work', maxAttempts: 2, backoff: { baseMs: 1000, capMs: 1000 } } });
  await s.cron('report', '@every 1m', { queue: 'work', jitterMs: 5000 }, async (job) => {
    jobs.push({ id: job.id, attempt: job.attempt, nominal: job.nominal, dueAt: job.dueAt, firedAt: job.firedAt, fire: job.fire });
    await sleep(clock, 250);
    if (job.payload === 'fail' || job.attempt === 1) throw new Error(`boom ${job.attempt}`);
  });
  await clock.advance(60_000 + 5_000 + 250 + 2_000);

  const [fired] = of(log, 'fired');
  assert.equal(fired.schedule, 'report');
  assert.equal(fired.nominal, T0 + 60_000);
  assert.ok(fired.dueAt >= fired.nominal && fired.dueAt < fired.nominal + 5_000, JSON.stringify(fired));
  assert.equal(fired.firedAt, fired.dueAt);
  assert.equal(fired.fireId, `report@${T0 + 60_000}`);
  assert.equal(fired.reason, 'scheduled');
  assert.equal(fired.queue, 'work');
  // The handler's job knows its fire.
  assert.deepEqual(jobs[0], { id: fired.job, attempt: 1, nominal: fired.nominal, dueAt: fired.dueAt, firedAt: fired.firedAt, fire: fired.fireId });
  assert.equal(jobs[1].attempt, 2);
  const [failed] = of(log, 'failed');
  const { retryAt, ...rest } = failed;
  assert.deepEqual(rest, { job: fired.job, queue: 'work', attempt: 1, durationMs: 250, error: 'boom 1', fire: fired.fireId });
  // The backoff (1 s, jittered) from the failure, 250 ms after the fire.
  assert.ok(retryAt > fired.firedAt + 250 && retryAt <= fired.firedAt + 1250, `${retryAt - fired.firedAt}`);
  assert.ok(jobs[1] && retryAt <= fired.firedAt + 1250);
  const [completed] = of(log, 'completed');
  assert.deepEqual(completed, { job: fired.job, queue: 'work', attempt: 2, durationMs: 250, fire: fired.fireId });

  // Out of attempts: a failed without retry, then dead.
  const { job } = await s.enqueue('work', 'fail');
  await clock.advance(250 + 1000 + 250);
  const last = of(log, 'failed').filter((f) => f.job === job);
  assert.deepEqual(last.map((f) => [f.attempt, f.error, f.retryAt === null, f.durationMs]), [[1, 'boom 1', false, 250], [2, 'boom 2', true, 250]]);
  assert.deepEqual(of(log, 'dead'), [{ job, queue: 'work', attempt: 2, attempts: 2, durationMs: 250, reason: 'exhausted', error: 'boom 2', fire: null }]);
  const enqueued = jobs.find((j) => j.id === job);
  assert.deepEqual([enqueued.nominal, enqueued.dueAt, enqueued.firedAt, enqueued.fire], [null, null, null, null]);
  assert.deepEqual(of(log, 'error'), []);
  await s.stop();
});

test('events: skipped with reason, count, first and last', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  const log = record(s);
  await s.start();
  await s.cron('tick', '@every 1s', { overlap: 'skip' }, () => sleep(clock, 3_500));
  await clock.advance(5_000);
  const skipped = of(log, 'skipped');
  assert.ok(skipped.length > 0);
  for (const k of skipped) {
    assert.equal(k.schedule, 'tick');
    assert.equal(k.reason, 'overlap');
    assert.equal(k.count, (k.last - k.first) / 1000 + 1);
  }
  assert.equal(skipped[0].first, T0 + 2_000);
  await s.stop();
});

test('a throwing or rejecting listener breaks nothing: reported via error, or console.error without one', async () => {
  const clock = new VirtualClock(T0);
  const s = new Scheduler({ clock });
  const errors = [];
  const done = [];
  s.on('fired', () => {
    throw new Error('listener bug');
  });
  s.on('completed', async () => {
    throw new Error('async listener bug');
  });
  s.on('completed', (p) => done.push(p.job));
  const onError = (p) => errors.push(p);
  s.on('error', onError);
  await s.start();
  await s.cron('tick', '@every 1s', () => {});
  await clock.advance(3_000);
  assert.ok(done.length >= 2, 'the scheduler and the other listeners go on');
  assert.ok(errors.some((e) => e.source === 'listener' && e.event === 'fired' && e.error.message === 'listener bug'));
  assert.ok(errors.some((e) => e.source === 'listener' && e.event === 'completed' && e.error.message === 'async listener bug'));

  // Without an error listener: console.error, and still nothing breaks.
  s.off('error', onError);
  const logged = [];
  const orig = console.error;
  console.error = (...a) => logged.push(a);
  try {
    const before = done.length;
    await clock.advance(2_000);
    assert.ok(done.length > before);
  } finally {
    console.error = orig;
  }
  assert.ok(logged.some((a) => String(a[0]).includes("'fired' listener")), JSON.stringify(logged));
  assert.throws(() => s.on('fire', () => {}), (e) => e instanceof ChimeError && e.code === 'invalid_input' && e.field === 'event');
  await s.stop();
});

test('interrupted: a restart releases the claim of the last run; the job keeps its fire times from the journal', async () => {
  const store = new MemoryStore();
  const clockA = new VirtualClock(T0);
  const a = new Scheduler({ clock: clockA, store });
  const seen = [];
  await a.start();
  await a.cron('tick', '@every 1m', { jitterMs: 10_000 }, (job) => {
    seen.push(job);
    return new Promise(() => {}); // never ends: the process "dies"
  });
  await clockA.advance(75_000);
  assert.equal(seen.length, 1);
  // The next process on the same store (a abandoned, as if killed).
  const clockB = new VirtualClock(T0 + 80_000);
  const b = new Scheduler({ clock: clockB, store });
  const log = record(b);
  b.cron('tick', '@every 1m', { jitterMs: 10_000 }, (job) => void seen.push(job));
  await b.start();
  await clockB.advance(10);
  assert.deepEqual(of(log, 'interrupted'), [{ job: seen[0].id, queue: 'tick', attempt: 1, interruptions: 1, fire: seen[0].fire }]);
  const again = seen[1];
  assert.deepEqual([again.id, again.attempt, again.nominal, again.dueAt, again.firedAt], [seen[0].id, 1, seen[0].nominal, seen[0].dueAt, seen[0].firedAt]);
  assert.notEqual(again.dueAt, null);
  await b.stop();
});

test('cron() before start({ prune: true }) declares the schedules: the others in the store are removed', async () => {
  const store = new MemoryStore();
  const clock = new VirtualClock(T0);
  const old = new Scheduler({ clock, store });
  await old.start();
  await old.cron('keep', '@every 1h', () => {});
  await old.cron('gone', '@every 1h', () => {});
  await old.stop();

  // Without prune the removed cron() call changes nothing.
  const kept = new Scheduler({ clock, store });
  kept.cron('keep', '@every 1h', () => {});
  assert.deepEqual(await kept.start(), { pruned: [] });
  assert.deepEqual(kept.engine.scheduleNames().sort(), ['gone', 'keep']);
  await kept.stop();

  // A declaration the engine refuses: start rejects, nothing is pruned or journaled.
  const lines = store.lines.length;
  const bad = new Scheduler({ clock, store, prune: true });
  const refused = bad.every('keep', '90 minutes', () => {});
  await assert.rejects(bad.start(), (e) => e instanceof ChimeError && e.code === 'invalid_duration');
  await assert.rejects(refused, (e) => e.code === 'invalid_duration');
  assert.equal(store.lines.length, lines);

  const s = new Scheduler({ clock, store, prune: true });
  const log = record(s);
  const upserted = s.every('keep', 3_600_000, () => {});
  const result = await s.start();
  assert.deepEqual(result, { pruned: ['gone'] });
  assert.ok((await upserted).scheduleUpserted);
  assert.deepEqual(s.engine.scheduleNames(), ['keep']);
  assert.equal(s.engine.schedule('keep').def.spec, '@every 3600000ms');
  assert.deepEqual(of(log, 'error'), []);
  await s.stop();
  // start({ prune }) overrides the constructor's default.
  const t = new Scheduler({ clock, store });
  assert.deepEqual(await t.start({ prune: true }), { pruned: ['keep'] });
  await t.stop();
});
