#!/usr/bin/env bash
# The dashboard's first load at scale, timed: the release `chime run`
# with 10,000 schedules and 1,000,000 jobs, each list view loaded in a
# fresh headless chromium (Debian's) CHIME_DASHBOARD_ROUNDS times (5),
# median and worst printed (host-native/dashboard-test/bench.js).
# BENCHMARKS.md "Dashboard first load" records its output. Run it on a
# quiet machine: the browser's start is most of a first load.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p chime-native --bin chime --locked
export CHIME_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/chime"
cd host-native/dashboard-test
npm ci --no-audit --no-fund --loglevel=error
node bench.js
