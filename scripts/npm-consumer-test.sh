#!/usr/bin/env bash
# The npm package as a user gets it: packs wasm/ (after scripts/build-wasm.sh),
# installs the tarball into a scratch app (a temporary copy of wasm/consumer:
# `npm ci` of its pinned tools — typescript, esbuild, vite, playwright-core —
# then `npm install --no-save` of the tarball, whose hash changes every
# build and so stays out of the lockfile) and runs wasm/consumer/consumer.test.js
# there: the pack listing, tsc --strict on the shipped examples (Node and
# browser typings), the examples run in Node, and an esbuild bundle and a
# Vite build of a small page in Debian's chromium (CHIME_REQUIRE_BROWSER=1:
# fail, not skip, without it).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "the package's license files are the repository's"
cmp LICENSE-MIT wasm/LICENSE-MIT
cmp LICENSE-APACHE wasm/LICENSE-APACHE

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

step "npm pack"
(cd wasm && npm pack --dry-run --json --loglevel=error > "$tmp/dry-run.json" &&
  npm pack --pack-destination "$tmp" --loglevel=error > /dev/null)
ls "$tmp"/chime-scheduler-*.tgz

step "a scratch app: npm ci, npm install the tarball"
cp -r wasm/consumer "$tmp/app"
rm -rf "$tmp/app/node_modules" "$tmp/app/dist" "$tmp/app/dist-"* "$tmp/app/examples"
cd "$tmp/app"
npm ci --no-audit --no-fund --loglevel=error
npm install --no-save --no-audit --no-fund --loglevel=error "$tmp"/chime-scheduler-*.tgz

step "consumer tests"
CHIME_DRY_RUN="$tmp/dry-run.json" node --test --test-concurrency=1 consumer.test.js
