// The root README's JavaScript quick start.
import { Scheduler, FileStore, preview } from 'chime-scheduler';

console.log(preview('30 2 * * *', { tz: 'America/New_York', count: 5 }));   // next fires, with DST notes

const s = new Scheduler({ store: new FileStore('./chime-data') });
await s.start();                                                 // replays the journal after a crash
await s.cron('nightly', '0 3 * * *', { tz: 'Europe/London' }, async (job) => { console.log(job.fire); });
await s.stop();                                                  // a service: on SIGTERM
