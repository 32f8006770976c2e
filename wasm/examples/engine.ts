// The raw sans-I/O engine in virtual time: you pass `now` with every
// input, drain the commands, and sleep until `pollTimeout()`.
import { Engine } from 'chime-scheduler';

const e = new Engine({ seed: 1 });
e.handle(Date.UTC(2026, 0, 1), {
  upsertSchedule: { name: 'backup', spec: '@every 1h', target: { queue: 'jobs', payload: { db: 'main' } } },
});
e.handle(Date.UTC(2026, 0, 1, 1), 'advance');
for (const cmd of e.drain()) {            // a few calls into wasm per drain
  if (cmd.fire) console.log(cmd.fire.fireId);   // backup@1767229200000
}
// A large advance (say 100k fires) is best handled in bounded chunks:
// for (let b = e.drain(4096); b.length > 0; b = e.drain(4096)) { ... }
const { claimed } = e.handle(Date.UTC(2026, 0, 1, 1), { claim: { queue: 'jobs', worker: 'w1', max: 10 } });
const [job] = claimed.jobs;
e.handle(Date.UTC(2026, 0, 1, 1, 0, 5), { complete: { job: job.job, token: job.token } });
console.log(e.pollTimeout());             // 1767232800000: the next boundary

const saved = e.snapshot();               // canonical JSON
const again = Engine.restore(saved);      // again.snapshot() === saved
console.log(again.snapshot() === saved);  // true
