#!/usr/bin/env node
// A chime worker in JavaScript: Node 20, the global fetch, no npm packages.
//
// It claims jobs from one queue in batches with a long-poll, runs `handle`
// on each, keeps the leases of the jobs it holds alive with a heartbeat
// timer, completes each job or fails it with the error (and, if the handler
// says so, the time to retry), and on SIGINT or SIGTERM stops claiming,
// finishes the jobs it holds and exits 0.
//
//     CHIME_TOKEN=... node worker.mjs emails
//
// Environment:
//   CHIME_URL    the daemon (default http://127.0.0.1:9464)
//   CHIME_TOKEN  a token with the `work` scope on the queue (`work:emails`)
//   WORKER_NAME  shown as the job's worker (default js-<pid>)
//   BATCH        jobs per claim (default 10)
//   LEASE_MS     lease per claim and per heartbeat (default 30000)
//   HANDLED_LOG  a file to append "<job id> <attempt>" to for every
//                completed job (the test's record of what this worker did)
//
// See docs/clients.md and docs/http.md ("Workers").

import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const BASE = (process.env.CHIME_URL ?? "http://127.0.0.1:9464").replace(/\/+$/, "");
const TOKEN = process.env.CHIME_TOKEN;
const NAME = process.env.WORKER_NAME ?? `js-${process.pid}`;
const BATCH = Number(process.env.BATCH ?? 10);
const LEASE_MS = Number(process.env.LEASE_MS ?? 30000);
const WAIT_MS = 5000; // a long-poll: the claim waits up to 5 s for a job (max 25 s)
const HANDLED_LOG = process.env.HANDLED_LOG;

/** An error answer of the API: {"error": code, "message", "field"}. */
class ApiError extends Error {
  constructor(status, body) {
    super(`HTTP ${status} ${body.error}: ${body.message}`);
    this.status = status;
    this.code = body.error;
  }
  // 429 and 5xx (busy, stopping, no leader): the same call may work later.
  get retryable() {
    return this.status === 429 || this.status >= 500;
  }
}

/** One JSON call; resolves to the reply or rejects with ApiError / a network error. */
async function api(method, path, body) {
  const headers = { "content-type": "application/json" };
  if (TOKEN) headers.authorization = `Bearer ${TOKEN}`;
  const reply = await fetch(BASE + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT_MS + 30000),
  });
  const text = await reply.text();
  if (!reply.ok) {
    let err;
    try {
      err = JSON.parse(text);
    } catch {
      err = { error: "http_error", message: text.slice(0, 200) };
    }
    throw new ApiError(reply.status, err);
  }
  return JSON.parse(text);
}

/** Thrown by a handler to fail the attempt and retry at a given time. */
class RetryLater extends Error {
  constructor(message, retryAtMs) {
    super(message);
    this.retryAtMs = retryAtMs;
  }
}

/**
 * The work. Replace it with yours: throw to fail the attempt.
 *
 * This demo understands two payload fields: `sleepMs` (a long job: the
 * heartbeat keeps its lease while it runs) and `failOnce` (the first attempt
 * fails, as a flaky downstream would, and asks for a retry in 200 ms; the
 * engine's backoff decides when no time is given).
 */
async function handle(job) {
  const payload = job.payload !== null && typeof job.payload === "object" ? job.payload : {};
  if (payload.failOnce && job.attempt === 1) {
    throw new RetryLater("downstream busy (attempt 1)", Date.now() + 200);
  }
  await sleep(payload.sleepMs ?? 0);
}

let stopping = false; // set by SIGINT/SIGTERM: claim no more
const held = new Map(); // job id -> lease token, for the heartbeat
let beating = false; // one heartbeat call at a time

/** Extends the lease of every held job (one batch call; items are independent). */
async function heartbeat() {
  const jobs = [...held].map(([job, token]) => ({ job, token, leaseMs: LEASE_MS }));
  if (jobs.length === 0 || beating) return;
  beating = true;
  try {
    const { results } = await api("POST", "/v1/jobs/heartbeat", { jobs });
    for (const r of results) {
      // A job settled since the batch was built is refused: quiet.
      if (!r.ok && held.has(r.job)) log(`job ${r.job}: heartbeat refused: ${r.error.error}`);
    }
  } catch (e) {
    log(`heartbeat: ${why(e)}`); // the next beat tries again
  } finally {
    beating = false;
  }
}

/** complete/fail, retried a few times while the daemon is unavailable. */
async function settle(path, body) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api("POST", path, body);
    } catch (e) {
      if ((e instanceof ApiError && !e.retryable) || attempt === 4) throw e;
    }
    await sleep(200 * 2 ** attempt);
  }
}

/** Handles one claimed job and reports the outcome. */
async function run(job) {
  const { job: id, token } = job;
  try {
    let failure;
    try {
      await handle(job);
    } catch (e) {
      failure = e;
    }
    if (failure === undefined) {
      await settle(`/v1/jobs/${id}/complete`, { token });
      if (HANDLED_LOG) appendFileSync(HANDLED_LOG, `${id} ${job.attempt}\n`);
    } else {
      const body = { token, error: String(failure.message ?? failure) };
      if (failure instanceof RetryLater) body.retryAt = failure.retryAtMs;
      const reply = await settle(`/v1/jobs/${id}/fail`, body);
      log(`job ${id} failed (${body.error}): ${reply.outcome}`);
    }
  } catch (e) {
    // 409 lease_lost: the lease ran out (or the job was cancelled) and the
    // job is someone else's now; anything else is logged the same way.
    log(`job ${id}: ${why(e)}`);
  } finally {
    held.delete(id);
  }
}

/** An error's text; fetch's own ("fetch failed") hides the cause. */
function why(e) {
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message} (${cause})` : e.message;
}

function log(text) {
  process.stderr.write(`[${NAME}] ${text}\n`);
}

async function main(queue) {
  // A signal only sets the flag: the claim in flight (a long-poll of at most
  // WAIT_MS) returns, its jobs are run, then the loop ends.
  process.on("SIGINT", () => (stopping = true));
  process.on("SIGTERM", () => (stopping = true));
  const beat = setInterval(heartbeat, LEASE_MS / 3);
  log(`working ${queue} at ${BASE}`);
  try {
    while (!stopping) {
      let jobs;
      try {
        ({ jobs } = await api("POST", `/v1/queues/${encodeURIComponent(queue)}/claim`, {
          worker: NAME,
          max: BATCH,
          leaseMs: LEASE_MS,
          waitMs: WAIT_MS,
        }));
      } catch (e) {
        if (e instanceof ApiError && !e.retryable) {
          log(`claim refused: ${e.message}`); // a wrong token or queue: give up
          return 1;
        }
        log(`claim: ${why(e)}; retrying in 1 s`);
        await sleep(1000);
        continue;
      }
      for (const j of jobs) held.set(j.job, j.token);
      for (const j of jobs) await run(j);
    }
  } finally {
    clearInterval(beat);
  }
  log("stopped");
  return 0;
}

if (process.argv.length !== 3) {
  console.error("usage: worker.mjs QUEUE");
  process.exit(2);
}
process.exitCode = await main(process.argv[2]);
