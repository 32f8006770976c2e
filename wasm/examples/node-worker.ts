// A Node service in a few lines: schedules, a worker queue and file
// persistence. Type-checked with `tsc --strict` and run in Node by
// scripts/npm-consumer-test.sh, against the packed package's declarations.
import { Engine, Scheduler, FileStore, ChimeError, preview, validate } from 'chime-scheduler';
import type { Command, Input, Reply, ScheduleInfo, QueueStats, Job } from 'chime-scheduler';

interface Email {
  to: string;
  subject: string;
}

const scheduler = new Scheduler({
  store: new FileStore('./chime-data'),
  onCommand: (cmd: Command) => {
    if (cmd.event?.kind === 'job_dead') console.error(`job ${cmd.event.job} is dead after ${cmd.event.attempts} attempts`);
  },
});
await scheduler.start();

scheduler.worker<Email>('emails', async (job: Job<Email>) => {
  if (job.signal.aborted) return;
  console.log(`attempt ${job.attempt}: mail to ${job.payload.to}`);
}, { concurrency: 4, timeoutMs: 30_000 });

await scheduler.cron('digest', '0 8 * * MON-FRI', { tz: 'Europe/Berlin', overlap: 'skip', catchup: { windowMs: 3_600_000, max: 1 } }, async (job) => {
  await scheduler.enqueue('emails', { to: 'team@example.com', subject: `digest ${job.fire}` } satisfies Email, { key: `digest:${job.fire}` });
});

const info: ScheduleInfo | undefined = scheduler.engine.schedule('digest');
const stats: QueueStats | undefined = scheduler.engine.queueStats('emails');
console.log(info?.nextNominal, stats?.totals.enqueued);

// The raw engine, in virtual time.
const engine = new Engine({ seed: 7 });
const upsert: Input = { upsertSchedule: { name: 'backup', spec: '@every 1h', target: { queue: 'jobs' } } };
const reply: Reply = engine.handle(new Date('2026-01-01T00:00:00Z'), upsert);
if (typeof reply === 'object' && reply.scheduleUpserted) console.log(reply.scheduleUpserted.nextFire);
for (const cmd of engine.drain()) {
  if (cmd.fire) console.log(cmd.fire.fireId, cmd.fire.reason);
}
const next: number | null = engine.pollTimeout();
console.log(next);

try {
  engine.handle(Date.now(), { claim: { queue: 'jobs', worker: 'w', max: 0 } });
} catch (e) {
  if (e instanceof ChimeError) console.log(e.code, e.field);
}

for (const o of preview('30 2 * * *', { tz: 'America/New_York', count: 3 })) console.log(o.civil, o.note ?? '');
const v = validate('0 9 * * MON-FRU');
if (!v.valid) console.log(v.error.code, v.error.message);

// A service stops on SIGTERM; this example stops here.
process.on('SIGTERM', () => void scheduler.stop({ graceMs: 10_000 }));
await scheduler.stop({ graceMs: 10_000 });
