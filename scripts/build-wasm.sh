#!/usr/bin/env bash
# Builds the npm package in wasm/: the release .wasm, its wasm-bindgen glue
# (ESM, `--target web`: the same files load in Node 20 through
# `initSync` and in browsers/bundlers through `init`), shrunk by wasm-opt.
# Installs what it needs first (idempotent): the wasm32 target, the
# wasm-bindgen CLI at exactly the version in Cargo.lock (the CLI and the
# library must match, or the glue refuses to load), and binaryen's wasm-opt
# (-Oz to match the opt-level of the `wasm-release` profile; see Cargo.toml).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "wasm32 target"
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

step "wasm-bindgen CLI"
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$have" != "$want" ]; then
  echo "installing wasm-bindgen-cli $want (found: ${have:-none})"
  # --locked first (reproducible); if the registry no longer offers a
  # locked dependency (a yanked crate), fall back to a fresh resolution.
  cargo install wasm-bindgen-cli --version "$want" --locked ||
    cargo install wasm-bindgen-cli --version "$want"
fi
wasm-bindgen --version

step "wasm-opt"
if ! command -v wasm-opt >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y binaryen >/dev/null || { apt-get update >/dev/null && apt-get install -y binaryen >/dev/null; } || true
  fi
fi
command -v wasm-opt >/dev/null && wasm-opt --version || echo "wasm-opt not found: the .wasm is left unoptimized"

step "cargo build (wasm-release profile, wasm32)"
cargo build -p chime-wasm --target wasm32-unknown-unknown --profile wasm-release --locked

step "wasm-opt, wasm-bindgen"
out=wasm/pkg
rm -rf "$out"
# Cargo's output directory: CARGO_TARGET_DIR when set (a shared or
# per-worktree target directory), else ./target.
tgt="${CARGO_TARGET_DIR:-target}"
mkdir -p target/wasm-pkg
wasm="$tgt/wasm32-unknown-unknown/wasm-release/chime_wasm.wasm"
if command -v wasm-opt >/dev/null; then
  # Before wasm-bindgen, not after: Debian 12's binaryen (108) corrupts the
  # externref table that wasm-bindgen adds. Rust 1.82+ emits these post-MVP
  # features by default.
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    "$wasm" -o target/wasm-pkg/chime_wasm.wasm
  wasm=target/wasm-pkg/chime_wasm.wasm
fi
wasm-bindgen "$wasm" --out-dir "$out" --target web --omit-default-module-path
step "TypeScript declarations of the wire types (from the Rust types, ts-rs)"
mkdir -p wasm/types
# ts-rs warns about serde attributes it does not need (transparent,
# try_from): keep its output for failures only.
if ! cargo run -q -p chime-wasm --features ts --bin gen-types --locked \
  > wasm/types/wire.d.ts.tmp 2> target/wasm-pkg/gen-types.log; then
  cat target/wasm-pkg/gen-types.log
  exit 1
fi
mv wasm/types/wire.d.ts.tmp wasm/types/wire.d.ts

raw=$(stat -c %s "$out/chime_wasm_bg.wasm")
gz=$(gzip -9 -c "$out/chime_wasm_bg.wasm" | wc -c)
echo "chime_wasm_bg.wasm: $raw bytes, $gz bytes gzipped"
