#!/usr/bin/env bash
# A throwaway Redis server for chime's tests.
#
#   scripts/redis-test-server.sh COMMAND [ARGS...]   run COMMAND with the server up
#   scripts/redis-test-server.sh                     start it and wait for Ctrl-C
#
# Installs Debian's `redis-server` package when /usr/bin/redis-server is
# missing (needs root), then starts one on 127.0.0.1 on a free port, in a
# temporary directory, with the AOF on and `appendfsync always` (every
# write is fsynced before the reply: the fault tests check that nothing
# acknowledged is lost across kill -9), no RDB snapshots, a random
# password (`requirepass`), protected mode on, 1024 logical databases
# (one per test, so tests run in parallel on one server).
#
# COMMAND sees CHIME_REDIS_URL (redis://:password@127.0.0.1:port) and
# CHIME_TEST_REDIS_BIN / CHIME_TEST_REDIS_CONF for tests that kill and
# restart a server of their own. The server is stopped and its directory
# removed when the script exits, whatever COMMAND's outcome (its exit
# status is the script's).
set -euo pipefail

say() { printf 'redis-test-server: %s\n' "$*" >&2; }

bin=/usr/bin/redis-server
if [ ! -x "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    say "no $bin and not root: install Debian's redis-server package"
    exit 1
  fi
  say "installing Debian's redis-server package"
  apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >/dev/null
  [ -x "$bin" ] || { say "redis-server still missing after the install"; exit 1; }
fi
# The package starts a system server on 6379; ours never uses that one.

dir="$(mktemp -d "${TMPDIR:-/tmp}/chime-redis.XXXXXX")"
pid=""
sleeper=""
cleanup() {
  local status=$?
  [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    say "stopping the server"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

password="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
port=""
for _ in $(seq 1 20); do
  candidate=$((20000 + RANDOM % 40000))
  cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
port $candidate
dir $dir
appendonly yes
appendfsync always
save ""
requirepass $password
protected-mode yes
databases 1024
logfile $dir/server.log
CONF
  "$bin" "$dir/redis.conf" --daemonize no &
  pid=$!
  up=""
  for _ in $(seq 1 50); do
    if ! kill -0 "$pid" 2>/dev/null; then break; fi
    if grep -q "Ready to accept connections" "$dir/server.log" 2>/dev/null; then up=1; break; fi
    sleep 0.1
  done
  if [ -n "$up" ]; then port="$candidate"; break; fi
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
done
if [ -z "$port" ]; then
  say "the server did not start; its log:"
  cat "$dir/server.log" >&2 || true
  exit 1
fi

export CHIME_REDIS_URL="redis://:$password@127.0.0.1:$port"
export CHIME_TEST_REDIS_BIN="$bin" CHIME_TEST_REDIS_CONF="$dir/redis.conf"
say "$("$bin" --version | cut -d' ' -f1-3) listening on 127.0.0.1:$port in $dir (appendfsync always)"

if [ "$#" -gt 0 ]; then
  "$@"
else
  say "Ctrl-C stops it"
  while true; do
    sleep 3600 &
    sleeper=$!
    wait "$sleeper" || true
  done
fi
