#!/usr/bin/env bash
# chime's transports (Redis Streams, NATS JetStream) beside BullMQ on the
# same throwaway Redis server, in the same run. Results go in
# BENCHMARKS.md ("Transports: Redis and NATS beside BullMQ (issue 25)").
#
#   scripts/bench-transports.sh     JOBS=20000 IN_FLIGHT=64 CONSUMERS=64 CONCURRENCY=256 RUNS=2 by default
#
# chime (host-native/examples/transport_load.rs, once per transport):
# JOBS messages published with IN_FLIGHT publishes outstanding (jobs/s and
# the p50/p99 of one publish), then CONSUMERS (default IN_FLIGHT) consumers
# claim (256 at a time) and complete them one by one: end-to-end jobs/s.
# BullMQ (the pinned npm project in scripts/bench/bullmq, bench.mjs, on the
# machine's Node): JOBS single `Queue.add` calls IN_FLIGHT outstanding
# (jobs/s, p50/p99), drained by a `Worker` of concurrency CONCURRENCY with a
# no-op processor; then JOBS jobs by `addBulk` (1,000 a call), drained the
# same way.
# Servers: scripts/redis-test-server.sh (AOF, `appendfsync always` as the
# tests run it) and scripts/nats-test-server.sh (`sync_interval: always`).
# Each run does chime/Redis, chime/NATS and BullMQ with `appendfsync
# always`, then (FSYNC_EVERYSEC=1, the default) chime/Redis and BullMQ again
# after `CONFIG SET appendfsync everysec` (how BullMQ is usually
# benchmarked: Redis' default). Every run uses fresh Redis databases and
# NATS streams. Builds what it needs (--release --locked, `npm ci`); the
# servers and their data are removed on exit. Not part of the test command.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-20000}"
in_flight="${IN_FLIGHT:-64}"
consumers="${CONSUMERS:-$in_flight}"
concurrency="${CONCURRENCY:-256}"
runs="${RUNS:-2}"
everysec="${FSYNC_EVERYSEC:-1}"
tgt="${CARGO_TARGET_DIR:-$PWD/target}"
load="$tgt/release/examples/transport_load"

if [ -z "${CHIME_BENCH_INNER:-}" ]; then
  command -v npm >/dev/null || { apt-get update >/dev/null && apt-get install -y npm >/dev/null; }
  cargo build --release -p chime-native --example transport_load --locked -q
  (cd scripts/bench/bullmq && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  set +e
  CHIME_BENCH_INNER=1 scripts/redis-test-server.sh scripts/nats-test-server.sh "$0" "$@" |
    grep --line-buffered -v '^CHIME_NATS_URL='
  exit "${PIPESTATUS[0]}"
fi

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
# The password goes to redis-cli by its environment, never on a command line.
REDISCLI_AUTH="$(sed -n 's|^redis://:\([^@]*\)@.*|\1|p' <<<"$CHIME_REDIS_URL")"
export REDISCLI_AUTH
redis_port="${CHIME_REDIS_URL##*:}"
fsync() { redis-cli -h 127.0.0.1 -p "$redis_port" --no-auth-warning CONFIG SET appendfsync "$1" >/dev/null; }
bullmq_version="$(sed -n 's/^  "version": "\(.*\)".*/\1/p' scripts/bench/bullmq/node_modules/bullmq/package.json)"
db=1

modes=(always)
[ "$everysec" = 0 ] || modes+=(everysec)
for run in $(seq 1 "$runs"); do
  for mode in "${modes[@]}"; do
    fsync "$mode"
    echo "== run $run, appendfsync $mode: chime Redis Streams, $jobs jobs, $in_flight in flight =="
    CHIME_BENCH_REDIS_DB=$db "$load" redis "$jobs" "$in_flight" "$consumers" | tee "$dir/chime-redis-$mode-$run"
    db=$((db + 1))
    if [ "$mode" = always ]; then
      echo "== run $run: chime NATS JetStream (sync_interval always), $jobs jobs, $in_flight in flight =="
      "$load" nats "$jobs" "$in_flight" "$consumers" | tee "$dir/chime-nats-$mode-$run"
    fi
    echo "== run $run, appendfsync $mode: BullMQ $bullmq_version, Node $(node --version), $jobs jobs, $in_flight adds in flight, Worker concurrency $concurrency =="
    REDIS_URL="$CHIME_REDIS_URL/$db" node scripts/bench/bullmq/bench.mjs "$jobs" "$in_flight" "$concurrency" |
      tee "$dir/bullmq-$mode-$run"
    db=$((db + 1))
  done
done
fsync always

# "<label>: … = N jobs/s …" and "… p50 A ms, p99 B ms".
rate() { sed -n "s/^$2: .* = \([0-9]*\) jobs\/s.*/\1/p" "$1"; }
lat() { sed -n "s/^$2: .*p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1 \/ \2/p" "$1"; }
echo
echo "== summary: $jobs jobs, $in_flight publishes/adds in flight, $consumers chime consumers, BullMQ Worker concurrency $concurrency, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC') =="
echo "load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
echo "$(redis-server --version | cut -d' ' -f1-3); nats-server $("$CHIME_TEST_NATS_BIN" --version | sed 's/.*v//'); BullMQ $bullmq_version on Node $(node --version)"
echo
echo "| run | system | durability | publish jobs/s | publish p50 / p99 (ms) | end to end jobs/s |"
echo "| --- | --- | --- | --- | --- | --- |"
for run in $(seq 1 "$runs"); do
  for mode in "${modes[@]}"; do
    f="$dir/chime-redis-$mode-$run"
    echo "| $run | chime, Redis Streams | appendfsync $mode | $(rate "$f" publish) | $(lat "$f" publish) | $(rate "$f" consume) |"
    if [ "$mode" = always ]; then
      f="$dir/chime-nats-$mode-$run"
      echo "| $run | chime, NATS JetStream | sync_interval always | $(rate "$f" publish) | $(lat "$f" publish) | $(rate "$f" consume) |"
    fi
    f="$dir/bullmq-$mode-$run"
    echo "| $run | BullMQ, \`add\` | appendfsync $mode | $(rate "$f" add) | $(lat "$f" add) | $(rate "$f" 'worker (add)') |"
    echo "| $run | BullMQ, \`addBulk\` (1,000 a call) | appendfsync $mode | $(rate "$f" addBulk) | (bulk) | $(rate "$f" 'worker (addBulk)') |"
  done
done
