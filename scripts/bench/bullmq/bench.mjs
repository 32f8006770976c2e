// BullMQ measured the way host-native/examples/transport_load.rs measures
// chime's transports, for scripts/bench-transports.sh (BENCHMARKS.md
// "Transports: Redis and NATS beside BullMQ").
//
//   node bench.mjs JOBS IN_FLIGHT CONCURRENCY      (REDIS_URL set: redis://:pw@host:port/db)
//
// 1. single adds: JOBS `Queue.add` calls, IN_FLIGHT of them outstanding at
//    once (as chime's publishes are); jobs/s and the p50/p99 of one add.
//    Then a `Worker` with CONCURRENCY and a no-op processor drains them:
//    end-to-end jobs/s from the worker's start to the last `completed`.
// 2. bulk adds: JOBS jobs by `Queue.addBulk`, 1,000 a call; jobs/s. Then a
//    fresh Worker drains them as in 1.
// Jobs carry chime's benchmark body and `removeOnComplete: true` (chime's
// queue keeps one completed job and deletes each stream entry on
// completion). Each step uses a queue of its own, obliterated at the end.
// Output lines: `add: …`, `addBulk: …`, `worker (add): …`, `worker (addBulk): …`.
import { Queue, Worker } from "bullmq";
import { performance } from "node:perf_hooks";

const [jobs, inFlight, concurrency] = process.argv.slice(2).map(Number);
const url = process.env.REDIS_URL;
if (!url || !(jobs > 0) || !(inFlight > 0) || !(concurrency > 0)) {
  console.error("usage: REDIS_URL=… node bench.mjs JOBS IN_FLIGHT CONCURRENCY");
  process.exit(2);
}
const u = new URL(url);
const connection = {
  host: u.hostname,
  port: Number(u.port),
  password: decodeURIComponent(u.password) || undefined,
  db: Number(u.pathname.slice(1) || 0),
  maxRetriesPerRequest: null,
};
const data = { runId: "r-1", tenantId: "t-1", digests: ["sha256:00"] };
const opts = { removeOnComplete: true };
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const rate = (n, ms) => Math.round((n * 1000) / ms);

async function drain(name) {
  let completed = 0;
  let done;
  const allDone = new Promise((resolve) => (done = resolve));
  const start = performance.now();
  const worker = new Worker(name, async () => {}, { connection, concurrency });
  worker.on("completed", () => {
    completed += 1;
    if (completed === jobs) done();
  });
  worker.on("error", (e) => console.error(`bullmq worker error: ${e.message}`));
  await allDone;
  const ms = performance.now() - start;
  await worker.close();
  return ms;
}

// 1. Single adds, IN_FLIGHT outstanding.
{
  const name = `bench-add-${process.pid}`;
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const lat = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < jobs) {
        next += 1;
        const t0 = performance.now();
        await queue.add("bench", data, opts);
        lat.push(performance.now() - t0);
      }
    }),
  );
  const ms = performance.now() - start;
  lat.sort((a, b) => a - b);
  console.log(
    `add: ${jobs} in ${(ms / 1000).toFixed(2)}s = ${rate(jobs, ms)} jobs/s, ${inFlight} in flight, ` +
      `p50 ${pct(lat, 0.5).toFixed(2)} ms, p99 ${pct(lat, 0.99).toFixed(2)} ms`,
  );
  const wms = await drain(name);
  console.log(`worker (add): ${jobs} in ${(wms / 1000).toFixed(2)}s = ${rate(jobs, wms)} jobs/s, concurrency ${concurrency}`);
  await queue.obliterate({ force: true });
  await queue.close();
}

// 2. Bulk adds, 1,000 a call.
{
  const name = `bench-bulk-${process.pid}`;
  const queue = new Queue(name, { connection });
  await queue.waitUntilReady();
  const start = performance.now();
  for (let added = 0; added < jobs; added += 1000) {
    const n = Math.min(1000, jobs - added);
    await queue.addBulk(Array.from({ length: n }, () => ({ name: "bench", data, opts })));
  }
  const ms = performance.now() - start;
  console.log(`addBulk: ${jobs} in ${(ms / 1000).toFixed(2)}s = ${rate(jobs, ms)} jobs/s, 1000 a call`);
  const wms = await drain(name);
  console.log(`worker (addBulk): ${jobs} in ${(wms / 1000).toFixed(2)}s = ${rate(jobs, wms)} jobs/s, concurrency ${concurrency}`);
  await queue.obliterate({ force: true });
  await queue.close();
}
