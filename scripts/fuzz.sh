#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a fixed time, one after the
# other, one libFuzzer job each, and prints a summary.
#
#   scripts/fuzz.sh [seconds-per-target] [target ...]
#
# Default: 600 s for each of spec_parse, engine_handle, snapshot_restore,
# journal_replay. Stable toolchain: `--sanitizer none` (no ASan, which needs
# nightly); the targets are built in release with debug assertions and
# overflow checks on (cargo fuzz's default), so a Rust panic is the finding.
# Crash inputs land in fuzz/artifacts/<target>/, new corpus entries in
# fuzz/corpus/<target>/ (only the committed seed-* files are tracked),
# logs in fuzz/target/fuzz-logs/<target>.log.
set -euo pipefail

secs=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(spec_parse engine_handle snapshot_restore journal_replay)
fi

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

for t in "${targets[@]}"; do
  cargo fuzz build --sanitizer none "$t"
done

logs="$root/fuzz/target/fuzz-logs"
mkdir -p "$logs"
summary=()
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "artifacts/$t"
  before=$(find "artifacts/$t" -type f | wc -l)
  extra=()
  [ -f "dicts/$t.dict" ] && extra+=("-dict=dicts/$t.dict")
  echo "== $t: ${secs}s" >&2
  start=$(date +%s)
  touch "$logs/$t.stamp"
  rm -f fuzz-0.log
  set +e
  # -jobs=1: libFuzzer runs one worker and writes its output to fuzz-0.log.
  cargo fuzz run --sanitizer none "$t" "corpus/$t" -- \
    -jobs=1 -max_total_time="$secs" -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 "${extra[@]}" >"$logs/$t.run.log" 2>&1
  rc=$?
  set -e
  end=$(date +%s)
  if [ -f fuzz-0.log ]; then mv fuzz-0.log "$logs/$t.log"; else cp "$logs/$t.run.log" "$logs/$t.log"; fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$logs/$t.log" | tail -1 | awk '{print $2}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$logs/$t.log" | tail -1 | awk '{print $2}')
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$logs/$t.log" | tail -1 | awk '{print $2}')
  corpus=$(find "corpus/$t" -type f | wc -l)
  after=$(find "artifacts/$t" -type f | wc -l)
  found=$((after - before))
  if [ "$found" -gt 0 ] || [ "$rc" -ne 0 ]; then status=1; fi
  summary+=("$(printf '%-17s %6ss %12s execs %8s exec/s %6s corpus %4s MB rss  %s new artifacts (rc %s)' \
    "$t" "$((end - start))" "${execs:-?}" "${rate:-?}" "$corpus" "${rss:-?}" "$found" "$rc")")
  if [ "$found" -gt 0 ]; then
    find "artifacts/$t" -type f -newer "$logs/$t.stamp" | sed "s|^|    $t: fuzz/|" >&2
  fi
done

echo
echo "fuzz summary (${secs}s per target, --sanitizer none, -jobs=1; logs in fuzz/target/fuzz-logs/)"
printf '%s\n' "${summary[@]}"
exit "$status"
