// The driver most users want: one timer, workers per queue, persistence.
import { Scheduler, FileStore } from 'chime-scheduler';

// Your own code: what the jobs do. (This example stops once the mail is sent.)
let mailSent!: () => void;
const sent = new Promise<void>((resolve) => (mailSent = resolve));
async function buildReport(opts: { signal: AbortSignal }): Promise<void> { void opts; }
async function sendMail(mail: { to: string }): Promise<void> { console.log(`mail to ${mail.to}`); mailSent(); }

const s = new Scheduler({ store: new FileStore('./chime-data') });
await s.start();                          // restores snapshot + journal after a crash

await s.cron('nightly-report', '0 3 * * *', { tz: 'Europe/London' }, async (job) => {
  await buildReport({ signal: job.signal });
});

s.worker<{ to: string }>('emails', async (job) => sendMail(job.payload), { concurrency: 4, timeoutMs: 30_000 });
await s.enqueue('emails', { to: 'a@example.com' }, { key: 'welcome:42' });   // de-duplicated by key

process.on('SIGTERM', () => void s.stop({ graceMs: 10_000 }));
await sent;
await s.stop({ graceMs: 10_000 });
