// A process running the Scheduler on a FileStore, for crash.test.js, which
// SIGKILLs it at random moments and starts it again on the same directory.
//   node child.mjs <dir> <run-index> [final]
// Every handler start and end is appended (fsynced) to <dir>/handler.log.
// In `final` mode it pauses the schedules, waits until every job is done,
// prints the engine's view as JSON and exits.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Scheduler, FileStore } from '../../index.node.js';

const [dir, run, mode] = process.argv.slice(2);
const logFd = fs.openSync(path.join(dir, 'handler.log'), 'a');
const log = (rec) => {
  fs.writeSync(logFd, JSON.stringify({ run: Number(run), t: Date.now(), ...rec }) + '\n');
  fs.fsyncSync(logFd);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const s = new Scheduler({ store: new FileStore(path.join(dir, 'store')), snapshotEvery: 25, worker: `w${run}` });
await s.start();
// Idempotent setup: identical definitions are no-ops after the first run.
// A kill interrupts the jobs running then; each runs again at the next
// start. Kills come so often here that a job may be interrupted many
// times in a row: no bound on that in this test.
await s.handle({ declareQueue: { name: 'work', leaseMs: 1000, backoff: { baseMs: 50, capMs: 200 }, maxInterruptions: 1000 } });
s.worker('work', async (job) => {
  log({ ev: 'start', job: job.id, fire: job.fire, attempt: job.attempt });
  await sleep(Math.random() * 300);
  log({ ev: 'done', job: job.id, fire: job.fire, attempt: job.attempt });
}, { concurrency: 3 });
for (const [name, spec, overlap] of [['tick', '@every 1s', 'allow'], ['gated', '@every 1s +500ms', 'skip']]) {
  const r = await s.handle({ upsertSchedule: { name, spec, overlap, target: { queue: 'work' } } });
  if (r.scheduleUpserted.changed) log({ ev: 'created', schedule: name, nextFire: r.scheduleUpserted.nextFire });
}
// Plain jobs too, with a key per half second: a restart re-enqueues one
// with the same key, which must not create a second job.
const enqueue = async () => {
  const key = `u-${Math.floor(Date.now() / 500)}`;
  const { job, deduplicated } = await s.enqueue('work', { key }, { key });
  if (!deduplicated) log({ ev: 'enqueued', job, key });
};
if (mode !== 'final') {
  setInterval(enqueue, 200);
} else {
  await sleep(1500);
  await s.handle({ pauseSchedule: { name: 'tick' } });
  await s.handle({ pauseSchedule: { name: 'gated' } });
  // Jobs interrupted by the last kill were released at start.
  while (s.engine.liveJobs > 0) await sleep(50);
  const e = s.engine;
  const out = { tick: e.schedule('tick'), gated: e.schedule('gated'), work: e.queueStats('work') };
  await s.stop({ graceMs: 1000 });
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}
