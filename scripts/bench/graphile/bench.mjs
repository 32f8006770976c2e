// graphile-worker measured the way host-native/examples/pg_pools.rs
// measures chime's pools, for scripts/bench-pg.sh (BENCHMARKS.md
// "Postgres mode: the server API and graphile-worker").
//
//   node bench.mjs JOBS CONCURRENCY LOCAL_QUEUE      (DATABASE_URL set)
//
// 1. throughput: JOBS jobs added in bulk (`addJobs`, 1,000 a call), then a
//    `run()` runner with CONCURRENCY workers and a no-op task drains them;
//    jobs per second from the runner's start to the last task. LOCAL_QUEUE
//    > 0 turns on graphile's batching (`localQueue.size` and
//    `completeJobBatchDelay: 0`) and skips step 2; 0 is graphile's defaults.
// 2. latency: one producer adds a job every 5 ms (`addJob`, one statement
//    each) for 2,000 jobs while the runner idles in between (graphile's
//    LISTEN/NOTIFY, `pollInterval` default); the time from the addJob call
//    to the task's start, p50/p90/p99/max. The producer and the runner
//    share this process, as pg_pools' producer and pools share theirs.
//
// Both runs use a fresh schema, dropped at the end. Per-job info logs are
// off (chime's example logs nothing per job either); warnings are shown.
import { Logger, makeWorkerUtils, run } from "graphile-worker";
import { performance } from "node:perf_hooks";

const [jobs, concurrency, localQueue] = process.argv.slice(2).map(Number);
const connectionString = process.env.DATABASE_URL;
if (!connectionString || !(jobs > 0) || !(concurrency > 0)) {
  console.error("usage: DATABASE_URL=… node bench.mjs JOBS CONCURRENCY LOCAL_QUEUE");
  process.exit(2);
}
const schema = `bench_graphile_${process.pid}`;
const logger = new Logger(() => (level, message) => {
  if (level === "warning" || level === "error") console.error(`graphile ${level}: ${message}`);
});
const worker = { maxPoolSize: concurrency + 2 };
if (localQueue > 0) Object.assign(worker, { localQueue: { size: localQueue }, completeJobBatchDelay: 0 });
const options = { connectionString, schema, concurrency, logger, noHandleSignals: true, preset: { worker } };

const utils = await makeWorkerUtils({ connectionString, schema, logger });
await utils.migrate();

const pct = (sorted, p) => sorted[Math.floor((sorted.length - 1) * p)];

// 1. Throughput.
for (let done = 0; done < jobs; done += 1000) {
  const n = Math.min(1000, jobs - done);
  await utils.addJobs(Array.from({ length: n }, () => ({ identifier: "bench", payload: { n: 1 } })));
}
let completed = 0;
let drained;
const allDone = new Promise((resolve) => (drained = resolve));
const start = performance.now();
let runner = await run({
  ...options,
  taskList: {
    bench: async () => {
      completed += 1;
      if (completed === jobs) drained();
    },
  },
});
await allDone;
const wall = (performance.now() - start) / 1000;
await runner.stop();
const mode = localQueue > 0 ? `localQueue ${localQueue}, completeJobBatchDelay 0` : "defaults";
console.log(
  `throughput: ${jobs} jobs, concurrency ${concurrency} (${mode}): ${wall.toFixed(2)} s = ${Math.round(jobs / wall)} jobs/s`,
);

// 2. Latency at one job per 5 ms, with graphile's defaults.
if (localQueue > 0) {
  await utils.withPgClient((c) => c.query(`DROP SCHEMA "${schema}" CASCADE`));
  await utils.release();
  process.exit(0);
}
const LATENCY_JOBS = 2000;
const latencies = [];
let seen;
const allSeen = new Promise((resolve) => (seen = resolve));
runner = await run({
  connectionString,
  schema,
  concurrency,
  logger,
  noHandleSignals: true,
  preset: { worker: { maxPoolSize: concurrency + 2 } },
  taskList: {
    bench: async (payload) => {
      latencies.push(performance.now() - payload.t);
      if (latencies.length === LATENCY_JOBS) seen();
    },
  },
});
await new Promise((r) => setTimeout(r, 500));
const t0 = performance.now();
for (let i = 0; i < LATENCY_JOBS; i++) {
  // Ticks every 5 ms from t0; a late tick goes at once (tokio's interval
  // in pg_pools does the same).
  const wait = t0 + i * 5 - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  // Stamped before the call: includes addJob's own round trip and commit.
  await utils.addJob("bench", { t: performance.now() });
}
await allSeen;
await runner.stop();
latencies.sort((a, b) => a - b);
const f = (p) => pct(latencies, p).toFixed(1);
console.log(
  `claim latency (addJob called → task started), ${LATENCY_JOBS} jobs at 200/s: ` +
    `p50 ${f(0.5)} ms, p90 ${f(0.9)} ms, p99 ${f(0.99)} ms, max ${f(1)} ms`,
);
await utils.withPgClient((c) => c.query(`DROP SCHEMA "${schema}" CASCADE`));
await utils.release();
