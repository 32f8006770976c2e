#!/usr/bin/env bash
# The HTTP API's throughput on loopback, with wrk (Debian's package) as the
# load generator in the same run, against a release `chime run` on a fresh
# redb data directory (fsync per driver turn: every job is durable before
# its reply). Results go in BENCHMARKS.md ("Server API").
#
#   scripts/bench-api.sh [SECONDS]        (default 10 per measurement)
#
# Measures: single-job enqueue (keep-alive, 64 connections), batch enqueue
# (500 jobs a request), and an HTTP worker pool (batch claim of 100 + batch
# complete) over a queue filled beforehand, counted by the daemon's
# chime_jobs_total{outcome="completed"}. Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
cargo build --release -p chime-native --bin chime --locked -q
dir="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
cat > "$dir/chime.toml" <<TOML
[http]
address = "127.0.0.1:$port"

[[queue]]
name = "bench"
leaseMs = 600000
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
run "single-job enqueue" 1 64 enqueue.lua /v1/queues/bench/jobs
BATCH=500 run "batch enqueue, 500 jobs a request (jobs/s = requests/s x 500)" 1 8 batch.lua /v1/queues/bench/jobs
before="$(completed)"; before="${before:-0}"
t0=$(date +%s.%N)
MAX=${MAX:-100} run "worker pool: batch claim ${MAX:-100} + batch complete" 1 ${WORKER_CONNECTIONS:-32} worker.lua /v1/queues/bench/claim
t1=$(date +%s.%N)
after="$(completed)"
echo "worker pool: $((${after%.*} - ${before%.*})) jobs completed in $(echo "$t1 - $t0" | bc) s: $(echo "(${after%.*} - ${before%.*}) / ($t1 - $t0)" | bc) jobs/s"
