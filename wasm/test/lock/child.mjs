// A process running the Scheduler on a FileStore, for store-lock.test.js:
//   node child.mjs <dir>
// Prints one JSON line: `{"started":pid}` once started (then runs a
// schedule, logging each job it runs to <dir>/../runs-<pid>.log, until
// stdin says `stop`), or `{"code":…,"message":…,"pid":…}` if start failed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Scheduler, FileStore } from '../../index.node.js';

const [dir] = process.argv.slice(2);
const s = new Scheduler({ store: new FileStore(dir) });
try {
  await s.start();
} catch (e) {
  console.log(JSON.stringify({ code: e.code, message: e.message, pid: e.pid }));
  process.exit(3);
}
const log = path.join(path.dirname(dir), `runs-${process.pid}.log`);
await s.cron('tick', '@every 1s', async (job) => fs.appendFileSync(log, `${job.fire} ${job.attempt}\n`));
console.log(JSON.stringify({ started: process.pid }));
process.stdin.setEncoding('utf8');
process.stdin.on('data', async (d) => {
  if (!d.includes('stop')) return;
  await s.stop({ graceMs: 1000 });
  process.exit(0);
});
