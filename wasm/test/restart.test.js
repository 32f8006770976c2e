// Restarts of the Scheduler on a FileStore (real files), under virtual
// clocks (field report, issue 21, items 2–4), the same scenarios as the
// core's (tests/tests/queue/interrupted.rs, tests/tests/engine/stop.rs) and
// the native daemon's (host-native/tests/embedded/restart_interrupted.rs):
// - after a crash the job the dead process had claimed runs again at once
//   (`recover`, the first input of every start), under the same attempt
//   number: a crontab-style queue (`maxAttempts: 1`) does not dead-letter
//   it, and an `overlap: skip` schedule stops skipping as soon as it is
//   done (it used to skip every second until the old lease ran out);
// - `stop()` fires nothing from its first moment (`stop`), even while
//   heartbeats of running jobs go on; a job cut off by the grace period is
//   interrupted, not failed, at the next start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Scheduler, FileStore, VirtualClock } from '../index.node.js';

const T0 = Date.UTC(2026, 0, 1);

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'chime-restart-'));
}

/** A scheduler on `dir` with a crontab-style queue and an every-second schedule. */
async function scheduler(dir, clock, overlap, fn, cmds) {
  const s = new Scheduler({ clock, store: new FileStore(dir), onCommand: (c) => cmds.push(c) });
  await s.start();
  await s.handle({ declareQueue: { name: 'cron', maxAttempts: 1, leaseMs: 3000 } });
  await s.cron('tick', '@every 1s', { queue: 'cron', overlap }, fn);
  return s;
}

const skippedFor = (cmds, reason) => cmds.filter((c) => c.event?.kind === 'fire_skipped' && c.event.reason === reason);
const fired = (cmds) => cmds.filter((c) => c.fire);

/** A handler that records each run and never ends while `hang()` says so. */
function recording(runs, hang) {
  return (job) => {
    runs.push([job.id, job.attempt]);
    if (hang()) return new Promise(() => {});
  };
}

test('after a crash the claimed job runs again at once, and overlap: skip resumes', async () => {
  const dir = tmpdir();
  const runs = [];
  let hang = true;
  const fn = recording(runs, () => hang);
  // The first process: its 1 s fire starts a job that does not end, and
  // it dies 20.5 s in (abandoned: its clock never moves again, as if
  // killed; its heartbeats had kept the lease alive).
  const clockA = new VirtualClock(T0);
  const cmdsA = [];
  await scheduler(dir, clockA, 'skip', fn, cmdsA);
  await clockA.advance(20_500);
  assert.equal(runs.length, 1);
  assert.ok(skippedFor(cmdsA, 'overlap').length > 0, 'skipped while it ran');
  const [job] = runs[0];
  hang = false;
  // Its lock goes with it: a killed process leaves a stale one, taken over
  // by the next (test/store-lock.test.js); in one process, remove it.
  fs.rmSync(path.join(dir, 'lock'));
  // The next process, half a second later.
  const clockB = new VirtualClock(T0 + 21_000);
  const cmds = [];
  const b = await scheduler(dir, clockB, 'skip', fn, cmds);
  await clockB.advance(10);
  assert.deepEqual(runs[1], [job, 1], 'run again at once, same attempt number');
  assert.ok(cmds.some((c) => c.event?.kind === 'job_interrupted' && c.event.job === job));
  assert.equal(b.engine.job(job).state, 'completed', 'not dead-lettered (maxAttempts 1)');
  await clockB.advance(3_000);
  // The boundary at the restart itself (21 s) finds the job in flight
  // still; from then on every boundary fires.
  const late = skippedFor(cmds, 'overlap').filter((c) => c.event.last > T0 + 21_000);
  assert.deepEqual(late, [], 'no overlap skips once the job ran again');
  assert.ok(fired(cmds).length >= 3, JSON.stringify(cmds));
  const { totals } = b.engine.queueStats('cron');
  assert.deepEqual([totals.interrupted, totals.dead, totals.expired], [1, 0, 0]);
  await b.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('stop() fires nothing from its first moment; a job cut off by the grace period runs again', async () => {
  const dir = tmpdir();
  const runs = [];
  let hang = true;
  const fn = recording(runs, () => hang);
  const clock = new VirtualClock(T0);
  const cmds = [];
  const a = await scheduler(dir, clock, 'allow', fn, cmds);
  await clock.advance(1_500);
  assert.equal(runs.length, 1, 'the 1 s fire is running');
  const before = fired(cmds).length;
  // The grace period passes in real time while the virtual clock moves on:
  // the running job heartbeats every second (its 3 s lease), and each
  // heartbeat is an input that advances the engine.
  const stopping = a.stop({ graceMs: 300 });
  await clock.advance(5_000);
  await stopping;
  assert.equal(fired(cmds).length, before, 'no fire after stop() began');
  assert.equal(a.engine.isStopping, true);
  assert.equal(skippedFor(cmds, 'overlap').length, 0, 'nothing skipped either');
  // The next start, 10 s later.
  hang = false;
  await clock.advance(10_000);
  const cmdsB = [];
  const b = await scheduler(dir, clock, 'allow', fn, cmdsB);
  assert.equal(b.engine.isStopping, false, 'the start ended the stop');
  await clock.advance(10);
  const [job] = runs[0];
  assert.deepEqual(runs[1], [job, 1], 'interrupted, not failed: the same attempt again');
  assert.equal(b.engine.job(job).state, 'completed');
  await clock.advance(2_000);
  assert.ok(fired(cmdsB).length >= 2, 'the schedule fires again');
  const { totals } = b.engine.queueStats('cron');
  assert.deepEqual([totals.interrupted, totals.dead], [1, 0]);
  await b.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});
