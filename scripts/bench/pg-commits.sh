#!/usr/bin/env bash
# Transactions committed and WAL syncs in the throughput phase of
# host-native/examples/pg_pools.rs, for one or more builds of it, on one
# throwaway cluster (BENCHMARKS.md, "One commit per pool cycle"):
#
#   scripts/pg-test-server.sh scripts/bench/pg-commits.sh JOBS CONCURRENCY ROUNDS BINARY...
#
# Per binary and round: `pg_stat_database.xact_commit` and
# `pg_stat_wal.wal_sync` read before the run and when it prints its
# `throughput:` line, then its two result lines and the load average.
# Binaries alternate within a round so each sees the same load.
set -euo pipefail
jobs="$1" concurrency="$2" rounds="$3"
shift 3
psql="${CHIME_TEST_PG_BIN:-}/psql"
[ -x "$psql" ] || psql=psql
q() {
  "$psql" "$CHIME_TEST_DATABASE_URL" -Atc "SELECT (SELECT xact_commit FROM pg_stat_database
    WHERE datname = current_database()) || ' ' || (SELECT wal_sync FROM pg_stat_wal)"
}
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    : >"$out"
    # The counters are published by backends at their idle time.
    sleep 0.6
    read -r c0 s0 < <(q)
    "$bin" "$jobs" 1 "$concurrency" >"$out" &
    pid=$!
    until grep -q '^throughput' "$out"; do sleep 0.05; done
    read -r c1 s1 < <(q)
    wait "$pid"
    echo "round $r, $bin: $(head -1 "$out"); commits $((c1 - c0)), wal syncs $((s1 - s0)), load $(cut -d' ' -f1 /proc/loadavg)"
    echo "    $(tail -1 "$out")"
  done
done
