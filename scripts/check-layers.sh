#!/usr/bin/env bash
# The layering of core/src and host-native/src, checked with grep (the same
# commands docs/architecture.md lists): each layer names nothing of a layer
# above it, outside comments. Prints every offending line; exits 1 if any.
set -uo pipefail
cd "$(dirname "$0")/.."

bad=0
# no LAYER PATTERN DIR...: no line in DIR... (outside // comments) matches PATTERN.
no() {
  local what="$1" pattern="$2"
  shift 2
  local hits
  hits="$(grep -rnE "$pattern" "$@" | grep -vE '^[^:]+:[0-9]+:\s*//')"
  if [ -n "$hits" ]; then
    printf 'layering: %s\n%s\n' "$what" "$hits"
    bad=1
  fi
}

c=core/src
no "core ground imports a layer above" 'crate::(spec|wire|schedule|queue|lease|engine)\b' $c/time.rs $c/time $c/det.rs $c/host.rs
no "core spec/ imports a layer above" 'crate::(wire|schedule|queue|lease|engine)\b' $c/spec
no "core wire/ imports a layer above" 'crate::(schedule|queue|lease|engine)\b' $c/wire
no "core schedule/ imports queue, lease or engine" 'crate::(queue|lease|engine)\b' $c/schedule
no "core queue/ imports schedule, lease or engine" 'crate::(schedule|lease|engine)\b' $c/queue.rs $c/queue
no "core lease.rs imports schedule, queue or engine" 'crate::(schedule|queue|engine)\b' $c/lease.rs
no "core code reaches the root's re-exports" 'crate::[A-Z]' $(find $c -name '*.rs' ! -path $c/lib.rs)
no "core climbs with super::super" 'super::super' $c

# host-native, lowest first: store, driver, backend, worker, runtime (re-exported at
# the crate root, so `crate::{…}` and `crate::Name` are runtime too), then
# http and pg (beside each other), then daemon and main.rs.
h=host-native/src
root='crate::(\{|[A-Z]|check\b|start\b)'
no "host store/ imports a layer above" "crate::(driver|backend|worker|runtime|http|pg|daemon)\b|$root" $h/store
no "host driver/ imports a layer above" "crate::(backend|worker|runtime|http|pg|daemon)\b|$root" $h/driver
no "host backend/ imports a layer above" "crate::(worker|runtime|http|pg|daemon)\b|$root" $h/backend
no "host worker/ imports a layer above" "crate::(runtime|http|pg|daemon)\b|$root" $h/worker
no "host runtime/ imports a layer above" 'crate::(http|pg|daemon)\b' $h/runtime
no "host http/ imports pg or daemon" 'crate::(pg|daemon)\b' $h/http
no "host pg/ imports http or daemon" 'crate::(http|daemon)\b' $h/pg
no "host transport/ imports runtime, http, pg or daemon" 'crate::(runtime|http|pg|daemon)\b' $h/transport
# Only pg/, daemon/ and main.rs name the Postgres backend.
no "host names pg outside pg/, daemon/ and main.rs" '\bpg::|\bPg[A-Z]' \
  $h/store $h/driver $h/backend $h/worker $h/runtime $h/http $h/lib.rs
# lib.rs only declares modules and re-exports.
no "host lib.rs defines an item" '^\s*(pub(\([a-z]+\))? )?(async )?(fn|struct|enum|trait|impl|const|static|type|macro_rules)\b' $h/lib.rs

big="$(find core/src host-native/src wasm/src -name '*.rs' ! -name 'tests.rs' ! -name '*_tests.rs' \
  -exec wc -l {} + | awk '$2 != "total" && $1 > 800')"
if [ -n "$big" ]; then
  printf 'size: source files over 800 lines\n%s\n' "$big"
  bad=1
fi

if [ "$bad" = 0 ]; then echo "layering: ok"; fi
exit "$bad"
