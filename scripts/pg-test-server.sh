#!/usr/bin/env bash
# A throwaway PostgreSQL server for chime's tests.
#
#   scripts/pg-test-server.sh COMMAND [ARGS...]   run COMMAND with the server up
#   scripts/pg-test-server.sh                     start it and wait for Ctrl-C
#
# Installs Debian's `postgresql` package when no initdb is found under
# /usr/lib/postgresql/*/bin (needs root; a fresh Debian 12 CI machine runs as
# root), then makes a new cluster in a temporary directory, listening only on
# 127.0.0.1 on a free port and on a unix socket in that directory. fsync stays
# on: the tests check durability claims, which an fsync-off server would not
# honour. PostgreSQL refuses to run as root, so as root the cluster belongs to
# the `postgres` user (created by the package) and runs through runuser.
# Password (scram) authentication on TCP, with a random password in the URL.
#
# COMMAND sees CHIME_TEST_DATABASE_URL, and CHIME_TEST_PG_BIN (the
# directory of initdb and pg_ctl) and CHIME_TEST_PG_USER (the user servers
# run as: `postgres` as root, else ourselves) for tests that run a server
# of their own to restart it under chime; the server is stopped and its directory
# removed when the script exits, whatever COMMAND's outcome (its exit status
# is the script's).
set -euo pipefail

say() { printf 'pg-test-server: %s\n' "$*" >&2; }

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

bin="$(bindir)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  if [ "$(id -u)" != 0 ]; then
    say "no initdb under /usr/lib/postgresql/*/bin and not root: install Debian's postgresql package"
    exit 1
  fi
  say "installing Debian's postgresql package (apt-get update && apt-get install -y postgresql)"
  apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >/dev/null
  bin="$(bindir)"
  [ -x "$bin/initdb" ] || { say "initdb still missing after the install"; exit 1; }
fi

# As root, run the server as `postgres`; otherwise as ourselves.
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { say "running as root and there is no postgres user"; exit 1; }
  as_pg() { runuser -u postgres -- "$@"; }
  owner=postgres
else
  as_pg() { "$@"; }
  owner="$(id -un)"
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/chime-pg.XXXXXX")"
data="$dir/data"
started=""
sleeper=""
cleanup() {
  local status=$?
  [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
  if [ -n "$started" ]; then
    say "stopping the server"
    as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

chown "$owner" "$dir"
chmod 700 "$dir"
password="$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$password" >"$dir/pwfile"
chown "$owner" "$dir/pwfile"

say "initdb ($("$bin/postgres" --version)) in $data, as $owner"
as_pg "$bin/initdb" -D "$data" -U chime --pwfile="$dir/pwfile" \
  --auth-host=scram-sha-256 --auth-local=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
  { cat "$dir/initdb.log" >&2; exit 1; }
rm -f "$dir/pwfile"

# A free port: try random ones until the server binds (pg_ctl -w fails when
# it cannot), so no other tool is needed to probe ports.
port=""
for _ in $(seq 1 20); do
  candidate=$((20000 + RANDOM % 40000))
  if as_pg "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -c port=$candidate -c unix_socket_directories=$dir -c fsync=on -c max_connections=200" \
    start >/dev/null 2>&1; then
    port="$candidate"
    break
  fi
done
if [ -z "$port" ]; then
  say "the server did not start; its log:"
  cat "$dir/server.log" >&2 || true
  exit 1
fi
started=1

export CHIME_TEST_DATABASE_URL="postgresql://chime:$password@127.0.0.1:$port/postgres"
export CHIME_TEST_PG_BIN="$bin" CHIME_TEST_PG_USER="$owner"
say "listening on 127.0.0.1:$port and in $dir (fsync on)"
echo "CHIME_TEST_DATABASE_URL=$CHIME_TEST_DATABASE_URL"

if [ "$#" -gt 0 ]; then
  "$@"
else
  say "Ctrl-C stops it"
  # `wait` (unlike a foreground sleep) returns as soon as a signal arrives,
  # so the traps run at once.
  while true; do
    sleep 3600 &
    sleeper=$!
    wait "$sleeper" || true
  done
fi
