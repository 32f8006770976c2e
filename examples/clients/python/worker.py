#!/usr/bin/env python3
"""A chime worker in Python, standard library only (urllib, json, signal).

It claims jobs from one queue in batches with a long-poll, runs `handle` on
each, keeps the leases of the jobs it holds alive with a heartbeat thread,
completes each job or fails it with the error (and, if the handler says so,
the time to retry), and on SIGINT or SIGTERM stops claiming, finishes the
jobs it holds and exits 0.

    CHIME_TOKEN=... python3 worker.py emails

Environment:
  CHIME_URL    the daemon (default http://127.0.0.1:9464)
  CHIME_TOKEN  a token with the `work` scope on the queue (`work:emails`)
  WORKER_NAME  shown as the job's worker (default py-<pid>)
  BATCH        jobs per claim (default 10)
  LEASE_MS     lease per claim and per heartbeat (default 30000)
  HANDLED_LOG  a file to append "<job id> <attempt>" to for every completed
               job (the test's record of what this worker did)

See docs/clients.md and docs/http.md ("Workers").
"""

import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

URL = os.environ.get("CHIME_URL", "http://127.0.0.1:9464").rstrip("/")
TOKEN = os.environ.get("CHIME_TOKEN")
NAME = os.environ.get("WORKER_NAME", f"py-{os.getpid()}")
BATCH = int(os.environ.get("BATCH", "10"))
LEASE_MS = int(os.environ.get("LEASE_MS", "30000"))
WAIT_MS = 5000  # a long-poll: the claim waits up to 5 s for a job (max 25 s)
HANDLED_LOG = os.environ.get("HANDLED_LOG")


class ApiError(Exception):
    """An error answer of the API: {"error": code, "message", "field"}."""

    def __init__(self, status, body):
        super().__init__(f"HTTP {status} {body.get('error')}: {body.get('message')}")
        self.status = status
        self.code = body.get("error")

    @property
    def retryable(self):
        # 429 and 5xx (busy, stopping, no leader): the same call may work later.
        return self.status == 429 or self.status >= 500


def api(method, path, body=None, timeout=WAIT_MS / 1000 + 30):
    """One JSON call; returns the reply or raises ApiError / OSError."""
    req = urllib.request.Request(URL + path, method=method)
    req.add_header("content-type", "application/json")
    if TOKEN:
        req.add_header("authorization", f"Bearer {TOKEN}")
    data = None if body is None else json.dumps(body).encode()
    try:
        with urllib.request.urlopen(req, data, timeout=timeout) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as e:
        try:
            err = json.load(e)
        except ValueError:
            err = {"error": "http_error", "message": e.reason}
        raise ApiError(e.code, err) from None


class RetryLater(Exception):
    """Raised by a handler to fail the attempt and retry at a given time."""

    def __init__(self, message, retry_at_ms):
        super().__init__(message)
        self.retry_at_ms = retry_at_ms


def handle(job):
    """The work. Replace it with yours: raise to fail the attempt.

    This demo understands two payload fields: `sleepMs` (a long job: the
    heartbeat keeps its lease while it runs) and `failOnce` (the first
    attempt fails, as a flaky downstream would, and asks for a retry in
    200 ms; the engine's backoff decides when no time is given).
    """
    payload = job["payload"] if isinstance(job["payload"], dict) else {}
    if payload.get("failOnce") and job["attempt"] == 1:
        raise RetryLater("downstream busy (attempt 1)", int(time.time() * 1000) + 200)
    time.sleep(payload.get("sleepMs", 0) / 1000)


stopping = threading.Event()  # set by SIGINT/SIGTERM: claim no more
done = threading.Event()  # set when the jobs held are finished
held = {}  # job id -> lease token, for the heartbeat
held_lock = threading.Lock()


def heartbeat():
    """Extends the lease of every held job every third of the lease."""
    while not done.wait(LEASE_MS / 3000):
        with held_lock:
            jobs = [{"job": j, "token": t, "leaseMs": LEASE_MS} for j, t in held.items()]
        if not jobs:
            continue
        try:
            # One batch call for all; items are independent, always 200.
            for r in api("POST", "/v1/jobs/heartbeat", {"jobs": jobs})["results"]:
                # A job settled since the batch was built is refused: quiet.
                if not r["ok"] and r["job"] in held:
                    log(f"job {r['job']}: heartbeat refused: {r['error']['error']}")
        except (ApiError, OSError) as e:
            log(f"heartbeat: {e}")  # the next beat tries again


def settle(path, body):
    """complete/fail, retried a few times while the daemon is unavailable."""
    for attempt in range(5):
        try:
            return api("POST", path, body)
        except ApiError as e:
            if not e.retryable or attempt == 4:
                raise
        except OSError:
            if attempt == 4:
                raise
        time.sleep(0.2 * 2**attempt)


def run(job):
    """Handles one claimed job and reports the outcome."""
    jid, token = job["job"], job["token"]
    try:
        try:
            handle(job)
        except RetryLater as e:
            reply = settle(f"/v1/jobs/{jid}/fail",
                           {"token": token, "error": str(e), "retryAt": e.retry_at_ms})
            log(f"job {jid} failed ({e}): {reply['outcome']}")
        except Exception as e:  # any other error: the queue's backoff
            reply = settle(f"/v1/jobs/{jid}/fail", {"token": token, "error": repr(e)})
            log(f"job {jid} failed ({e!r}): {reply['outcome']}")
        else:
            settle(f"/v1/jobs/{jid}/complete", {"token": token})
            if HANDLED_LOG:
                with open(HANDLED_LOG, "a") as f:
                    f.write(f"{jid} {job['attempt']}\n")
    except ApiError as e:
        # 409 lease_lost: the lease ran out (or the job was cancelled) and the
        # job is someone else's now; anything else is logged the same way.
        log(f"job {jid}: {e}")
    finally:
        with held_lock:
            held.pop(jid, None)


def log(text):
    print(f"[{NAME}] {text}", file=sys.stderr, flush=True)


def main(queue):
    # A signal only sets the flag: the claim in flight (a long-poll of at
    # most WAIT_MS) returns, its jobs are run, then the loop ends.
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    beat = threading.Thread(target=heartbeat, daemon=True)
    beat.start()
    log(f"working {queue} at {URL}")
    while not stopping.is_set():
        try:
            jobs = api("POST", f"/v1/queues/{queue}/claim",
                       {"worker": NAME, "max": BATCH, "leaseMs": LEASE_MS, "waitMs": WAIT_MS})["jobs"]
        except (ApiError, OSError) as e:
            if isinstance(e, ApiError) and not e.retryable:
                log(f"claim refused: {e}")  # a wrong token or queue: give up
                return 1
            log(f"claim: {e}; retrying in 1 s")
            stopping.wait(1)
            continue
        with held_lock:
            held.update({j["job"]: j["token"] for j in jobs})
        for job in jobs:
            run(job)
    done.set()
    beat.join(timeout=5)  # bounded: a beat in flight ends or is abandoned
    log("stopped")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: worker.py QUEUE")
    sys.exit(main(sys.argv[1]))
