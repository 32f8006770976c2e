#!/usr/bin/env bash
# The HTTP API's throughput on loopback, with wrk (Debian's package) as the
# load generator in the same run, against a release `chime run` on a fresh
# redb data directory (fsync per driver turn: every job is durable before
# its reply). Results go in BENCHMARKS.md ("Server API").
#
#   scripts/bench-api.sh [SECONDS]        (default 10 per measurement)
#
# Measures: single-job enqueue (keep-alive, 64 connections), batch enqueue
# (500 jobs a request), an HTTP worker pool (batch claim of MAX + batch
# complete of what it got, per connection: host-native/examples/api_load.rs)
# over the queue the batch run filled, checked against the daemon's
# chime_jobs_total{outcome="completed"}, and the long-poll wake-up on an
# empty queue. Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
cargo build --release -p chime-native --bin chime --example api_load --locked -q
dir="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
cat > "$dir/chime.toml" <<TOML
[http]
address = "127.0.0.1:$port"

[[queue]]
name = "bench"
leaseMs = 600000

[[queue]]
name = "wake"
TOML
target/release/chime run --config "$dir/chime.toml" --data "$dir/data" ${CHIME_BENCH_ARGS:-} 2> "$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -fs "$base/healthz" >/dev/null && break; sleep 0.1; done
completed() {
  { curl -fs "$base/metrics" || true; } | grep '^chime_jobs_total{' | grep 'queue="bench"' | grep 'outcome="completed"' | awk '{print $2}' | head -n 1 || true
}
run() { # NAME THREADS CONNECTIONS SCRIPT PATH
  echo "== $1 =="
  wrk -t"$2" -c"$3" -d"${secs}s" --latency -s "scripts/bench/$4" "$base$5" | grep -E 'Requests/sec|Latency|50%|99%|requests in|Non-2xx'
}
run "single-job enqueue, ${ENQUEUE_CONNECTIONS:-64} connections" 1 ${ENQUEUE_CONNECTIONS:-64} enqueue.lua /v1/queues/bench/jobs
BATCH=500 run "batch enqueue, 500 jobs a request (jobs/s = requests/s x 500)" 1 8 batch.lua /v1/queues/bench/jobs
before="$(completed)"; before="${before:-0}"
echo "== worker pool: batch claim ${MAX:-100} + batch complete, ${WORKER_CONNECTIONS:-16} connections =="
target/release/examples/api_load work "$base" bench "${WORKER_CONNECTIONS:-16}" "$secs" "${MAX:-100}"
after="$(completed)"
echo "  the daemon counted $((${after%.*} - ${before%.*})) completed"
echo "== long-poll wake-up =="
target/release/examples/api_load wake "$base" wake "${ROUNDS:-300}"
