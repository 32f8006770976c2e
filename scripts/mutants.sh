#!/usr/bin/env bash
# Mutation testing of the core's schedule, catch-up, fire, engine and queue
# modules (core/src/schedule/**, core/src/engine/**, core/src/queue/**,
# core/src/queue.rs; configuration in .cargo/mutants.toml) against the tests.
# Slow (every mutant rebuilds chime-core and the test binaries): not for CI.
# Run it in shards and with --in-diff for later changes. See docs/testing.md,
# "Mutation testing".
#
#   scripts/mutants.sh [cargo-mutants options...]
#
# Everything is passed through to `cargo mutants`, e.g.
#   scripts/mutants.sh --shard 0/8                      # one shard of all mutants
#   scripts/mutants.sh -f core/src/schedule/catchup.rs  # one file
#   scripts/mutants.sh -f core/src/engine/fire.rs --re 'offer'   # some mutants
#   git diff main > /tmp/d.diff && scripts/mutants.sh --in-diff /tmp/d.diff
#   scripts/mutants.sh --list                           # what would be tested
#
# Environment:
#   MUTANTS_TESTS=core|all  test targets (default core: the unit tests and
#       chime-tests' engine and queue binaries; engine and queue, the
#       selections of when each scenario was its own binary, mean core)
#   MUTANTS_TIMEOUT=<s>   per-mutant test timeout (default 150)
#   MUTANTS_JOBS=<n>      mutants built and tested at once, with
#                         MUTANTS_IN_PLACE=0 (default 1)
#   MUTANTS_IN_PLACE=0    mutate a copy in a temp dir instead of this tree
#                         (default: in place, reusing ./target; never edit
#                         the tree while it runs, and do not kill it with -9)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo mutants --version >/dev/null 2>&1; then
  echo "cargo-mutants missing: cargo install cargo-mutants --locked" >&2
  exit 2
fi

# Incremental builds: a mutant rebuilds chime-core, but the test binaries
# that depend on it recompile in seconds instead of minutes
# (measured: ~20 s per mutant against 140 s with CARGO_INCREMENTAL=0). An
# interrupted run once left the incremental cache inconsistent (link
# errors, "undefined hidden symbol", which make every mutant look
# unviable), so each run starts from a fresh cache for the workspace
# crates (MUTANTS_KEEP_INCREMENTAL=1 keeps it).
if [ "${MUTANTS_KEEP_INCREMENTAL:-0}" != 1 ]; then
  rm -rf target/debug/incremental/chime_* target/debug/incremental/engine-* \
    target/debug/incremental/queue-* target/debug/incremental/spec-*
fi

# Fast test knobs (docs/testing.md): a smaller simulation and model test,
# the CI proptest seed so a run is reproducible.
export CHIME_SIM_SEEDS="${CHIME_SIM_SEEDS:-8}"
export CHIME_SIM_STEPS="${CHIME_SIM_STEPS:-200}"
export PROPTEST_CASES="${PROPTEST_CASES:-32}"
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261129}"

# Test targets: chime-tests' engine binary (the engine scenarios, golden
# traces, model test, simulation, planted bugs, fuzz regressions) and queue
# binary (the queue scenarios). The spec binary (the spec_* scenarios and
# oracle_self) exercises core/src/spec and the oracle, which are not mutated
# here, so it is left out. (When every scenario was its own binary the
# engine and queue selections differed by a few files; the queue binary
# runs in about a second, so both now take the two binaries whole.)
case "${MUTANTS_TESTS:-core}" in
  core | engine | queue) tests=(engine queue) ;;
  all) tests=() ;;
  *) echo "MUTANTS_TESTS: core or all" >&2; exit 2 ;;
esac

args=(--timeout "${MUTANTS_TIMEOUT:-150}" --build-timeout 900)
if [ "${MUTANTS_IN_PLACE:-1}" = 1 ]; then
  # In place is one mutant at a time (the same as --jobs 1).
  args+=(--in-place)
else
  args+=(--jobs "${MUTANTS_JOBS:-1}")
fi
if [ ${#tests[@]} -gt 0 ]; then
  # --lib: the unit tests of chime-core (and chime-tests); --test: the rest.
  # As cargo args (not test args) they restrict the build as well.
  args+=(--cargo-arg=--lib)
  for t in "${tests[@]}"; do args+=("--cargo-arg=--test=$t"); done
fi
# The simulation's fixed 4,000-step run ignores CHIME_SIM_STEPS.
skip=(--skip one_long_run)
args+=(--cargo-test-arg=--)
for a in "${skip[@]}"; do args+=("--cargo-test-arg=$a"); done

# cargo-mutants builds its baseline for the mutated package only, which
# has none of the --test targets above (they are chime-tests'), so the
# baseline is skipped and run here instead, with the same targets: the
# unmutated tree must pass them (MUTANTS_PREFLIGHT=0 skips this).
args+=(--baseline=skip)
if [ "${MUTANTS_PREFLIGHT:-1}" = 1 ]; then
  targets=()
  if [ ${#tests[@]} -gt 0 ]; then
    targets=(--lib)
    for t in "${tests[@]}"; do targets+=("--test=$t"); done
  fi
  echo "preflight: the unmutated tree against the selected tests" >&2
  nice -n "${MUTANTS_NICE:-10}" cargo test --workspace "${targets[@]}" -- "${skip[@]}" -q >&2
fi

# Default scope, unless files are chosen.
scope=(-f 'core/src/schedule/**' -f 'core/src/engine/**' -f 'core/src/queue/**' -f core/src/queue.rs)
for a in "$@"; do
  case "$a" in -f | --file | --file=* | -f?*) scope=() ;; esac
done

exec nice -n "${MUTANTS_NICE:-10}" cargo mutants "${args[@]}" "${scope[@]}" "$@"
