// Events, as croner and BullMQ users expect them, and a declarative start:
// the schedules are the cron()/every() calls made before start(); with
// `prune: true`, a schedule whose call was removed from the code is removed
// from the store too (as the daemon does with its config file).
import { Scheduler, FileStore } from 'chime-scheduler';
import type { FailedEvent } from 'chime-scheduler';

const s = new Scheduler({ store: new FileStore('./chime-data'), prune: true });

s.on('fired', (e) => console.log(`fired ${e.fireId} (${e.reason}), ${e.firedAt - e.dueAt} ms after due`));
s.on('skipped', (e) => console.warn(`skipped ${e.count} of ${e.schedule} (${e.reason}), ${e.first}…${e.last}`));
s.on('completed', (e) => console.log(`job ${e.job} on ${e.queue} done in ${e.durationMs} ms, attempt ${e.attempt}`));
s.on('failed', (e: FailedEvent) => console.warn(`job ${e.job} failed: ${e.error}`, e.retryAt === null ? 'for good' : `retry at ${e.retryAt}`));
s.on('dead', (e) => console.warn(`job ${e.job} is dead after ${e.attempts} attempts: ${e.error}`));
s.on('interrupted', (e) => console.warn(`job ${e.job} was interrupted (attempt ${e.attempt}), running it again`));
s.on('error', (e) => console.warn('chime:', e.source, e.event, e.error));   // a listener threw, or persistence failed

let ran!: () => void;
const firstHeartbeat = new Promise<void>((resolve) => (ran = resolve));

// Declared before start(): start applies them, and prunes every other schedule.
void s.cron('nightly-report', '0 3 * * *', { tz: 'Europe/London' }, async (job) => {
  console.log(`report for the night of ${new Date(job.nominal ?? 0).toISOString()}`);
});
void s.every('heartbeat', '1s', async (job) => {
  console.log(`heartbeat ${job.fire}, attempt ${job.attempt}, due ${job.dueAt}, fired ${job.firedAt}`);
  ran();
});

const { pruned } = await s.start();
console.log(`removed schedules: ${JSON.stringify(pruned)}`);   // [] on a new store
await firstHeartbeat;
await s.stop();
