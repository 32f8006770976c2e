#!/usr/bin/env python3
"""Enqueues jobs on a chime queue in batches, standard library only.

Each batch (1 to 1,000 jobs) is one request, all or nothing: applied in one
commit, or refused whole with the failing item named (`jobs[3].delayMs`).
Every job carries an idempotency key, so a batch retried after a lost reply
or a 5xx adds nothing twice (the reply says `deduplicated`).

    CHIME_TOKEN=... python3 producer.py emails --count 1000 --batch 100

Prints the id of every job, one a line, on stdout.

Environment: CHIME_URL (default http://127.0.0.1:9464), CHIME_TOKEN (a token
with the `enqueue` scope on the queue). See docs/clients.md.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("CHIME_URL", "http://127.0.0.1:9464").rstrip("/")
TOKEN = os.environ.get("CHIME_TOKEN")


def enqueue_batch(queue, jobs, tries=5):
    """POST /v1/queues/{queue}/jobs with {"jobs": [...]}; retried while the
    daemon is unavailable (connection error, 429, 5xx), never on a refusal."""
    req = urllib.request.Request(f"{URL}/v1/queues/{queue}/jobs", method="POST")
    req.add_header("content-type", "application/json")
    if TOKEN:
        req.add_header("authorization", f"Bearer {TOKEN}")
    data = json.dumps({"jobs": jobs}).encode()
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(req, data, timeout=30) as reply:
                return json.load(reply)["jobs"]
        except urllib.error.HTTPError as e:
            try:
                body = json.load(e)
            except ValueError:
                body = {"error": "http_error", "message": e.reason}
            if e.code != 429 and e.code < 500 or attempt == tries - 1:
                sys.exit(f"refused: HTTP {e.code} {body['error']}: {body['message']}"
                         f" (field: {body.get('field')})")
        except OSError as e:
            if attempt == tries - 1:
                sys.exit(f"unavailable: {e}")
        time.sleep(0.2 * 2**attempt)  # the keys make the retry safe


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("queue")
    p.add_argument("--count", type=int, default=100, help="jobs in all")
    p.add_argument("--batch", type=int, default=100, help="jobs per request (at most 1000)")
    p.add_argument("--key-prefix", default=f"demo-{int(time.time() * 1000)}",
                   help="idempotency keys are PREFIX-N (rerun with the same prefix: nothing added)")
    p.add_argument("--fail-every", type=int, default=0,
                   help="every Nth job fails its first attempt (the demo worker's failOnce)")
    p.add_argument("--slow-every", type=int, default=0,
                   help="every Nth job takes --slow-ms (the demo worker's sleepMs)")
    p.add_argument("--slow-ms", type=int, default=0)
    a = p.parse_args()

    for start in range(0, a.count, a.batch):
        jobs = []
        for n in range(start, min(start + a.batch, a.count)):
            payload = {"n": n}
            if a.fail_every and n % a.fail_every == 0:
                payload["failOnce"] = True
            if a.slow_every and n % a.slow_every == 0:
                payload["sleepMs"] = a.slow_ms
            jobs.append({"payload": payload, "key": f"{a.key_prefix}-{n}"})
        for r in enqueue_batch(a.queue, jobs):
            print(r["id"])
    sys.stdout.flush()


if __name__ == "__main__":
    main()
