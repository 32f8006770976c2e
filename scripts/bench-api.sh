#!/usr/bin/env bash
# The HTTP API's throughput on loopback, with wrk (Debian's package) as the
# load generator in the same run, against a release `chime run`: on a fresh
# redb data directory (fsync per driver turn: every job is durable before
# its reply), or in Postgres mode against `chime run --database` replicas
# on a throwaway cluster of scripts/pg-test-server.sh (fsync on: every job
# is committed before its reply). Results go in BENCHMARKS.md ("Server API
# over HTTP", "Postgres mode: the server API and graphile-worker").
#
#   scripts/bench-api.sh [SECONDS]                              (default 10 per measurement)
#   CHIME_BENCH_MODE=postgres scripts/bench-api.sh [SECONDS]    one replica
#   CHIME_BENCH_MODE=postgres REPLICAS=2 scripts/bench-api.sh   two, the load split over both
#
# Measures: single-job enqueue (keep-alive, 64 connections), batch enqueue
# (500 jobs a request), an HTTP worker pool (batch claim of MAX + batch
# complete of what it got, per connection: host-native/examples/api_load.rs)
# over the queue the batch run filled, and the long-poll wake-up on an
# empty queue (with two replicas: the claim waits on one, the enqueue goes
# to the other). Checks: embedded, the tool's completions against the
# daemon's chime_jobs_total{outcome="completed"}; Postgres, the rows
# (chime_jobs{state} of /metrics, read from the table): every acknowledged
# enqueue is a row, and the jobs that left `available` are exactly the
# ones the tool completed, none left claimed. With several replicas each
# wrk and api_load process drives one replica and the figures are summed.
# Builds what it needs (--release --locked), installs wrk with apt when
# missing, stops its daemons and removes its files on exit. Not part of
# the test command. Knobs: ENQUEUE_CONNECTIONS (64), WORKER_CONNECTIONS
# (16), MAX (100), ROUNDS (300), CHIME_BENCH_ARGS (extra `chime run` flags).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
mode="${CHIME_BENCH_MODE:-embedded}"
replicas="${REPLICAS:-1}"
case "$mode" in
  embedded) [ "$replicas" = 1 ] || { echo "REPLICAS needs CHIME_BENCH_MODE=postgres" >&2; exit 2; } ;;
  postgres) ;;
  *) echo "CHIME_BENCH_MODE is embedded or postgres, not $mode" >&2; exit 2 ;;
esac
tgt="${CARGO_TARGET_DIR:-$PWD/target}"

if [ -z "${CHIME_BENCH_INNER:-}" ]; then
  command -v wrk >/dev/null || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  cargo build --release -p chime-native --bin chime --example api_load --locked -q
  if [ "$mode" = postgres ]; then
    # Again, inside a throwaway cluster; its URL line (with the password)
    # is not echoed.
    set +e
    CHIME_BENCH_INNER=1 scripts/pg-test-server.sh "$0" "$@" | grep --line-buffered -v '^CHIME_TEST_DATABASE_URL='
    exit "${PIPESTATUS[0]}"
  fi
fi

dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
summary="$dir/summary"
note() { echo "$*" | tee -a "$summary"; }
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"

bases=()
for r in $(seq "$replicas"); do
  port=$((20000 + RANDOM % 20000))
  cat > "$dir/chime-$r.toml" <<TOML
[http]
address = "127.0.0.1:$port"

[[queue]]
name = "bench"
leaseMs = 600000

[[queue]]
name = "wake"
TOML
  if [ "$mode" = postgres ]; then
    # The URL goes by the environment (CHIME_DATABASE_URL), not argv.
    # shellcheck disable=SC2086
    CHIME_DATABASE_URL="$CHIME_TEST_DATABASE_URL" "$tgt/release/chime" run --config "$dir/chime-$r.toml" ${CHIME_BENCH_ARGS:-} 2> "$dir/log-$r" &
  else
    # shellcheck disable=SC2086
    "$tgt/release/chime" run --config "$dir/chime-$r.toml" --data "$dir/data" ${CHIME_BENCH_ARGS:-} 2> "$dir/log-$r" &
  fi
  pids+=($!)
  bases+=("http://127.0.0.1:$port")
done
for b in "${bases[@]}"; do
  for _ in $(seq 300); do curl -fs "$b/healthz" >/dev/null && break; sleep 0.1; done
  curl -fs "$b/healthz" >/dev/null || { echo "no /healthz at $b; the daemon's log:" >&2; cat "$dir"/log-* >&2; exit 1; }
done

metric() { # NAME LABEL-FILTER... : the first value of NAME whose labels match every filter
  local name="$1" line
  shift
  line="$({ curl -fs "${bases[0]}/metrics" || true; } | grep "^$name{" || true)"
  for f in "$@"; do line="$(grep -F "$f" <<< "$line" || true)"; done
  awk 'NR == 1 {print $2}' <<< "$line"
}
rows() { # STATE: jobs of queue bench in STATE (Postgres: read from the table)
  local v
  v="$(metric chime_jobs 'queue="bench"' "state=\"$1\"")"
  echo "${v:-0}"
}
completed() {
  local v
  v="$(metric chime_jobs_total 'queue="bench"' 'outcome="completed"')"
  echo "${v%.*}"
}

# wrk over every replica at once, CONNECTIONS split between them; prints
# each run's lines (and the sum), and leaves the count of 2xx replies in
# $dir/ok.
run() { # NAME CONNECTIONS SCRIPT PATH
  note "== $1 =="
  local per=$(( ($2 + replicas - 1) / replicas )) r=0 rps=0 n=0 got non2xx
  local load=()
  for b in "${bases[@]}"; do
    r=$((r + 1))
    wrk -t1 -c"$per" -d"${secs}s" --latency -s "scripts/bench/$3" "$b$4" > "$dir/wrk-$r" &
    load+=($!)
  done
  for p in "${load[@]}"; do wait "$p"; done
  for r in $(seq "$replicas"); do
    grep -E 'Requests/sec|Latency|50%|99%|requests in|Non-2xx' "$dir/wrk-$r" | sed "s/^/  [replica $r] /" | tee -a "$summary"
    rps="$(awk -v s="$rps" '/Requests\/sec/ {s += $2} END {print s}' "$dir/wrk-$r")"
    got="$(awk '/requests in/ {print $1}' "$dir/wrk-$r")"
    non2xx="$(awk '/Non-2xx/ {print $NF}' "$dir/wrk-$r")"
    n=$((n + ${got:-0} - ${non2xx:-0}))
  done
  [ "$replicas" = 1 ] || note "  all replicas: $rps requests/s"
  echo "$n" > "$dir/ok"
}
run "single-job enqueue, ${ENQUEUE_CONNECTIONS:-64} connections in all" "${ENQUEUE_CONNECTIONS:-64}" enqueue.lua /v1/queues/bench/jobs
acked="$(cat "$dir/ok")"
BATCH=500 run "batch enqueue, 500 jobs a request (jobs/s = requests/s x 500), 8 connections in all" 8 batch.lua /v1/queues/bench/jobs
acked=$((acked + 500 * $(cat "$dir/ok")))

if [ "$mode" = postgres ]; then
  sleep 1 # a request wrk gave up on at its end may still be committing
  avail0="$(rows available)"
  if [ "$avail0" -ge "$acked" ]; then check="ok"; else check="FAILED"; fi
  note "  check: $acked enqueues acknowledged, $avail0 jobs available in the table: $check"
else
  before="$(completed)"; before="${before:-0}"
fi

note "== worker pool: batch claim ${MAX:-100} + batch complete, ${WORKER_CONNECTIONS:-16} connections in all =="
per=$(( (${WORKER_CONNECTIONS:-16} + replicas - 1) / replicas ))
r=0
load=()
for b in "${bases[@]}"; do
  r=$((r + 1))
  "$tgt/release/examples/api_load" work "$b" bench "$per" "$secs" "${MAX:-100}" > "$dir/work-$r" &
  load+=($!)
done
for p in "${load[@]}"; do wait "$p"; done
done_by_tool=0
for r in $(seq "$replicas"); do
  sed "s/^/  [replica $r] /" "$dir/work-$r" | tee -a "$summary"
  n="$(awk '/jobs completed in/ {print $3}' "$dir/work-$r")"
  done_by_tool=$((done_by_tool + ${n:-0}))
done
if [ "$mode" = postgres ]; then
  secs_work="$(awk '/jobs completed in/ {print $7}' "$dir/work-1")"
  [ "$replicas" = 1 ] || note "  all replicas: $done_by_tool jobs, $(awk -v n="$done_by_tool" -v s="$secs_work" 'BEGIN {printf "%.0f", n / s}') jobs/s"
  avail1="$(rows available)"
  claimed1="$(rows claimed)"
  left=$((avail0 - avail1))
  if [ "$left" = "$done_by_tool" ] && [ "$claimed1" = 0 ]; then check="ok"; else check="FAILED"; fi
  note "  check: $left jobs left available, the tool completed $done_by_tool, $claimed1 still claimed: $check"
else
  after="$(completed)"
  note "  the daemon counted $((${after%.*} - ${before%.*})) completed, the tool $done_by_tool"
fi

note "== long-poll wake-up$([ "$replicas" = 1 ] || echo ', claim on replica 1, enqueue on replica 2') =="
"$tgt/release/examples/api_load" wake "${bases[0]}" wake "${ROUNDS:-300}" "${bases[1]:-}" | tee -a "$summary"

echo
echo "== summary: $mode, $replicas replica(s), ${secs} s a measurement, $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC') =="
echo "load average at the start $load_start, at the end $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
cat "$summary"
