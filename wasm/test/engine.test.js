// The raw Engine through the built package, in virtual time: the clock is
// whatever `now` the test passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Engine, ChimeError } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1); // 2026-01-01T00:00Z
const HOUR = 3_600_000;

const fires = (cmds) => cmds.filter((c) => c.fire).map((c) => c.fire);
const events = (cmds, kind) => cmds.filter((c) => c.event?.kind === kind).map((c) => c.event);

test('catch-up after downtime fires the most recent boundaries and reports the rest as skipped', () => {
  const e = new Engine({ seed: 7 });
  e.handle(T0, { upsertSchedule: { name: 'hourly', spec: '@every 1h', overlap: 'allow', catchup: { max: 3 }, target: { queue: 'jobs' } } });
  e.drain();
  // Down for 10 hours and a bit: boundaries 1h..10h were missed.
  e.handle(T0 + 10 * HOUR + 5, 'advance');
  const cmds = e.drain();
  const f = fires(cmds);
  assert.deepEqual(f.map((x) => x.nominal), [8, 9, 10].map((h) => T0 + h * HOUR));
  // The boundary due at this advance is on time; the older ones are catch-up.
  assert.deepEqual(f.map((x) => x.reason), ['catchup', 'catchup', 'scheduled']);
  assert.deepEqual(f.map((x) => x.fireId), [8, 9, 10].map((h) => `hourly@${T0 + h * HOUR}`));
  const [skip] = events(cmds, 'fire_skipped');
  assert.equal(skip.reason, 'catchup_cap');
  assert.equal(skip.count, 7);
  assert.equal(skip.first, T0 + HOUR);
  assert.equal(skip.last, T0 + 7 * HOUR);
  // Accounting identity: every boundary before the cursor fired or was skipped.
  const info = e.schedule('hourly');
  assert.equal(info.fires + info.skipped, 10);
  assert.equal(info.nextNominal, T0 + 11 * HOUR);
  assert.equal(e.pollTimeout(), T0 + 11 * HOUR);
});

test('catch-up under the default skip policy fires the most recent boundary, not the oldest', () => {
  const e = new Engine({ seed: 7 });
  e.handle(T0, { upsertSchedule: { name: 'nightly', spec: '@every 1h', catchup: { max: 4 }, target: { queue: 'jobs' } } });
  e.drain();
  e.handle(T0 + 10 * HOUR + 5, 'advance');
  const cmds = e.drain();
  assert.deepEqual(fires(cmds).map((x) => x.nominal), [T0 + 10 * HOUR]);
  const skipped = events(cmds, 'fire_skipped').map((s) => [s.reason, s.count, s.first, s.last]).sort();
  assert.deepEqual(skipped, [
    ['catchup_cap', 6, T0 + HOUR, T0 + 6 * HOUR],
    ['superseded', 3, T0 + 7 * HOUR, T0 + 9 * HOUR],
  ]);
  assert.equal(e.schedule('nightly').nextNominal, T0 + 11 * HOUR);
});

test('overlap skip: a fire whose previous job is still running is skipped, not doubled', () => {
  const e = new Engine();
  e.handle(T0, { upsertSchedule: { name: 'sync', spec: '@every 1m', target: { queue: 'q' } } });
  e.handle(T0 + 60_000, 'advance');
  assert.equal(fires(e.drain()).length, 1);
  const { claimed } = e.handle(T0 + 60_001, { claim: { queue: 'q', worker: 'w1', max: 10 } });
  assert.equal(claimed.jobs.length, 1);
  // The job is still running at the next boundary.
  e.handle(T0 + 120_000, 'advance');
  const cmds = e.drain();
  assert.equal(fires(cmds).length, 0);
  assert.deepEqual(events(cmds, 'fire_skipped').map((s) => [s.reason, s.count]), [['overlap', 1]]);
  // Once it completes (within its 60 s lease), the next boundary fires again.
  const [job] = claimed.jobs;
  e.handle(T0 + 120_000, { complete: { job: job.job, token: job.token } });
  e.drain();
  e.handle(T0 + 180_000, 'advance');
  assert.deepEqual(fires(e.drain()).map((f) => f.fireId), [`sync@${T0 + 180_000}`]);
});

test('retries with backoff, then a dead letter that can be redriven', () => {
  const e = new Engine({ seed: 1 });
  e.handle(T0, { declareQueue: { name: 'mail', maxAttempts: 2, backoff: { baseMs: 1000, capMs: 1000 } } });
  const { enqueued } = e.handle(T0, { enqueue: { queue: 'mail', payload: { to: 'a@b.c', amount: 1.50 } } });
  let now = T0;
  const attempt = () => {
    const { claimed } = e.handle(now, { claim: { queue: 'mail', worker: 'w', max: 1 } });
    assert.equal(claimed.jobs.length, 1);
    return claimed.jobs[0];
  };
  const first = attempt();
  assert.equal(first.attempt, 1);
  assert.deepEqual(first.payload, { to: 'a@b.c', amount: 1.5 });
  const r1 = e.handle(now, { fail: { job: first.job, token: first.token, error: 'smtp down' } });
  assert.equal(r1.job.state, 'scheduled');
  // Equal jitter: the retry waits between d/2 and d (d = 1000 ms).
  assert.ok(r1.job.runAt >= now + 500 && r1.job.runAt <= now + 1000, String(r1.job.runAt - now));
  const retried = events(e.drain(), 'job_retried');
  assert.equal(retried[0].attempt, 1);
  now = e.pollTimeout();
  assert.equal(now, r1.job.runAt);
  e.handle(now, 'advance');
  assert.ok(e.drain().some((c) => c.wake?.queue === 'mail'));
  const second = attempt();
  assert.equal(second.attempt, 2);
  assert.notEqual(second.token, first.token);
  // A stale token is fenced off.
  assert.throws(() => e.handle(now, { complete: { job: first.job, token: first.token } }), (err) => err instanceof ChimeError && err.code === 'lease_lost');
  const r2 = e.handle(now, { fail: { job: second.job, token: second.token, error: 'still down' } });
  assert.equal(r2.job.state, 'dead');
  assert.deepEqual(events(e.drain(), 'job_dead').map((d) => d.attempts), [2]);
  const dead = e.deadLetters('mail');
  assert.equal(dead.length, 1);
  assert.equal(dead[0].id, enqueued.job);
  assert.equal(dead[0].lastError, 'still down');
  assert.equal(e.queueStats('mail').totals.dead, 1);
  assert.equal(e.handle(now, { redrive: { queue: 'mail' } }).count.count, 1);
  assert.equal(e.job(enqueued.job).state, 'available');
});

test('lease expiry counts as a failed attempt (a crashed worker)', () => {
  const e = new Engine();
  e.handle(T0, { declareQueue: { name: 'q', leaseMs: 1000, backoff: { baseMs: 0, capMs: 0 } } });
  e.handle(T0, { enqueue: { queue: 'q', payload: 1 } });
  const { claimed } = e.handle(T0, { claim: { queue: 'q', worker: 'w', max: 1 } });
  assert.equal(claimed.jobs[0].deadline, T0 + 1000);
  assert.equal(e.pollTimeout(), T0 + 1000);
  e.handle(T0 + 1000, 'advance');
  assert.deepEqual(events(e.drain(), 'lease_expired').map((x) => x.attempt), [1]);
  const again = e.handle(T0 + 1000, { claim: { queue: 'q', worker: 'w', max: 1 } }).claimed.jobs;
  assert.equal(again[0].attempt, 2);
});

test('Dates are accepted wherever a timestamp goes in; numbers come out', () => {
  const e = new Engine();
  const start = new Date(T0 + HOUR);
  e.handle(new Date(T0), { upsertSchedule: { name: 'd', spec: '0 * * * *', startAt: start, target: { queue: 'q', payload: { when: new Date(T0) } } } });
  const info = e.schedule('d');
  assert.equal(info.def.startAt, T0 + HOUR);
  // Outside time fields a Date keeps JSON's ISO form.
  assert.deepEqual(info.def.target.payload, { when: '2026-01-01T00:00:00.000Z' });
  assert.equal(e.clock, T0);
  assert.equal(typeof e.pollTimeout(), 'number');
});

test('snapshot round-trips byte for byte and the journal replays to the same commands', () => {
  const e = new Engine({ seed: 42 });
  const journal = [];
  const recorded = [];
  const run = (now, input) => {
    journal.push(JSON.stringify({ now, input }));
    try {
      e.handle(now, input);
    } catch {
      // a refused input is part of the history
    }
    recorded.push(...e.drain());
  };
  const snap0 = e.snapshot();
  run(T0, { upsertSchedule: { name: 'a', spec: '*/5 * * * *', tz: 'Europe/London', jitterMs: 30_000, overlap: 'allow', target: { queue: 'q', payload: { x: 1e3 } } } });
  run(T0 + 11 * 60_000, 'advance');
  run(T0 + 11 * 60_000, { claim: { queue: 'q', worker: 'w', max: 5 } });
  run(T0 + 12 * 60_000, { removeSchedule: { name: 'nope!' } });
  run(T0 + 30 * 60_000, 'advance');
  const snap = e.snapshot();
  assert.equal(Engine.restore(snap).snapshot(), snap);
  const replayed = Engine.replay(snap0, journal.join('\n') + '\n');
  assert.deepEqual(replayed.commands, recorded);
  assert.equal(replayed.engine.snapshot(), snap);
  assert.equal(replayed.replies[3].error.code, 'invalid_name');
  assert.ok(replayed.replies[3].error instanceof ChimeError);
  assert.ok(replayed.replies[0].ok.scheduleUpserted);
});

test('bad input throws ChimeError with a stable code and the field', () => {
  const e = new Engine();
  const rejects = (fn, code, field) =>
    assert.throws(fn, (err) => {
      assert.ok(err instanceof ChimeError, String(err));
      assert.ok(err instanceof Error);
      assert.equal(err.name, 'ChimeError');
      assert.equal(err.code, code, err.message);
      assert.equal(err.field, field, err.message);
      assert.ok(err.message.startsWith(code), err.message);
      return true;
    });
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'bad name', spec: '@every 1h', target: { queue: 'q' } } }), 'invalid_name', 'schedule');
  rejects(() => e.handle(T0, { upsertSchedule: { name: '__chime_x', spec: '@every 1h', target: { queue: 'q' } } }), 'reserved_name', 'schedule');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '61 * * * *', target: { queue: 'q' } } }), 'invalid_spec', 'spec');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '0 * * * *', tz: 'Mars/Olympus', target: { queue: 'q' } } }), 'invalid_time_zone', 'tz');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '@every 10ms', target: { queue: 'q' } } }), 'interval_too_short', 'spec');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '@every 1h', jitterMs: -1, target: { queue: 'q' } } }), 'invalid_input', 'jitterMs');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '@every 1h', colour: 'red', target: { queue: 'q' } } }), 'invalid_input', 'input');
  rejects(() => e.handle(T0, { noSuchInput: {} }), 'invalid_input', 'input');
  rejects(() => e.handle(T0 + 0.5, 'advance'), 'invalid_input', 'now');
  rejects(() => e.handle(-1, 'advance'), 'invalid_input', 'now');
  rejects(() => e.handle('yesterday', 'advance'), 'invalid_input', 'now');
  rejects(() => e.handle(T0, { enqueue: { queue: 'q', runAt: T0, delayMs: 5 } }), 'invalid_input', 'delayMs');
  rejects(() => new Engine({ seed: 1, colour: 'red' }), 'invalid_input', 'config');
  rejects(() => Engine.restore('{"format": 999}'), 'invalid_input', 'snapshot');
  rejects(() => Engine.replay(null, 'not json\n'), 'invalid_journal', 'journal');
  // Inputs refused by checks that need no state changed nothing, not even the clock.
  assert.equal(e.clock, 0);
  assert.equal(e.scheduleCount, 0);
  // Checks that need state run after the advance to `now`: only the clock moved.
  rejects(() => e.handle(T0, { triggerSchedule: { name: 'ghost' } }), 'unknown_schedule', 'schedule');
  rejects(() => e.handle(T0, { upsertSchedule: { name: 'x', spec: '0 0 30 2 *', target: { queue: 'q' } } }), 'spec_never_fires', 'spec');
  rejects(() => e.handle(T0, { complete: { job: 99, token: 1 } }), 'unknown_job', 'job');
  assert.equal(e.clock, T0);
  assert.equal(e.scheduleCount, 0);
});
