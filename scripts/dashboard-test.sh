#!/usr/bin/env bash
# The dashboard in a real browser: Debian's chromium (installed if
# missing, never a downloaded build) driven by playwright-core, with
# axe-core, both pinned in host-native/dashboard-test/package-lock.json,
# against real `chime run` daemons (the debug binary, built here).
# dashboard.test.js: every page, its actions, the DST timeline, read-only
# tokens, the assets' size, a queue in NATS (scripts/nats-test-server.sh
# starts one). scale.test.js: every list one page, and the
# schedule list's pages and filter, with 10,000 schedules and 1,000,000
# jobs (a few minutes with the debug binary, most of it the daemon
# declaring 10,000 schedules). Load times are scripts/bench-dashboard.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
fi
cargo build -p chime-native --bin chime --locked
cd host-native/dashboard-test
npm ci --no-audit --no-fund --loglevel=error
export CHIME_REQUIRE_BROWSER=1
export CHIME_DASHBOARD_SCHEDULES="${CHIME_DASHBOARD_SCHEDULES:-10000}"
export CHIME_DASHBOARD_JOBS="${CHIME_DASHBOARD_JOBS:-1000000}"
# A throwaway nats-server for the page of a queue in JetStream.
CHIME_REQUIRE_NATS=1 ../../scripts/nats-test-server.sh npm test
