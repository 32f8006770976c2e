#!/usr/bin/env node
// Enqueues jobs on a chime queue in batches: Node 20, the global fetch, no
// npm packages.
//
// Each batch (1 to 1,000 jobs) is one request, all or nothing: applied in
// one commit, or refused whole with the failing item named
// (`jobs[3].delayMs`). Every job carries an idempotency key, so a batch
// retried after a lost reply or a 5xx adds nothing twice (the reply says
// `deduplicated`).
//
//     CHIME_TOKEN=... node producer.mjs emails --count 1000 --batch 100
//
// Prints the id of every job, one a line, on stdout. Options as in the
// Python producer: --count, --batch, --key-prefix, --fail-every,
// --slow-every, --slow-ms.
//
// Environment: CHIME_URL (default http://127.0.0.1:9464), CHIME_TOKEN (a
// token with the `enqueue` scope on the queue). See docs/clients.md.

import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";

const BASE = (process.env.CHIME_URL ?? "http://127.0.0.1:9464").replace(/\/+$/, "");
const TOKEN = process.env.CHIME_TOKEN;

/**
 * POST /v1/queues/{queue}/jobs with {"jobs": [...]}; retried while the
 * daemon is unavailable (network error, 429, 5xx), never on a refusal.
 */
async function enqueueBatch(queue, jobs, tries = 5) {
  const headers = { "content-type": "application/json" };
  if (TOKEN) headers.authorization = `Bearer ${TOKEN}`;
  for (let attempt = 0; ; attempt++) {
    let reply;
    try {
      reply = await fetch(`${BASE}/v1/queues/${encodeURIComponent(queue)}/jobs`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jobs }),
        signal: AbortSignal.timeout(30000),
      });
    } catch (e) {
      if (attempt === tries - 1) throw new Error(`unavailable: ${e.message} (${e.cause?.code ?? e.cause?.message})`);
    }
    if (reply?.ok) return (await reply.json()).jobs;
    if (reply) {
      const body = await reply.json().catch(() => ({ error: "http_error", message: reply.statusText }));
      if ((reply.status !== 429 && reply.status < 500) || attempt === tries - 1) {
        throw new Error(`refused: HTTP ${reply.status} ${body.error}: ${body.message} (field: ${body.field})`);
      }
    }
    await sleep(200 * 2 ** attempt); // the keys make the retry safe
  }
}

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    count: { type: "string", default: "100" },
    batch: { type: "string", default: "100" },
    "key-prefix": { type: "string", default: `demo-${Date.now()}` },
    "fail-every": { type: "string", default: "0" },
    "slow-every": { type: "string", default: "0" },
    "slow-ms": { type: "string", default: "0" },
  },
});
if (positionals.length !== 1) {
  console.error("usage: producer.mjs QUEUE [--count N] [--batch N] [--key-prefix P] ...");
  process.exit(2);
}
const [queue] = positionals;
const [count, batch, failEvery, slowEvery, slowMs] = ["count", "batch", "fail-every", "slow-every", "slow-ms"].map(
  (k) => Number(o[k]),
);

try {
  for (let start = 0; start < count; start += batch) {
    const jobs = [];
    for (let n = start; n < Math.min(start + batch, count); n++) {
      const payload = { n };
      if (failEvery && n % failEvery === 0) payload.failOnce = true;
      if (slowEvery && n % slowEvery === 0) payload.sleepMs = slowMs;
      jobs.push({ payload, key: `${o["key-prefix"]}-${n}` });
    }
    const ids = (await enqueueBatch(queue, jobs)).map((r) => r.id);
    process.stdout.write(ids.join("\n") + "\n");
  }
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
}
