#!/usr/bin/env bash
# `make test-later`: the tests as if it were HERALD_LATER_DAYS (default 365) days later, the
# servers included. A committed date, expiry, certificate validity, token time or retention
# cutoff that meets the wall clock fails here that many days before it fails `make test`
# (docs/testing.md, "A year later").
#
#   scripts/test-later.sh [swift test arguments]   default: every test but the disruptive ones
#
# Debian's faketime moves the clocks of everything it starts: the servers, `swift test`, the
# workers the tests start. scripts/lib/later-clock.c, preloaded in front of libfaketime, puts
# right what libfaketime gets wrong here: monotonic timerfd deadlines (libdispatch's: Task.sleep
# and every timeout built on it) and clock reads in signal handlers (PostgreSQL's timeouts). One
# faketime runs the whole of it, servers and tests: the shared clock it keeps for its children
# lives as long as it does.
#
# Debian's faketime (scripts/services.sh install) and the build (make test, or swift build
# --build-tests) must be there. The servers are restarted under the moved clock and, whatever
# happens, restarted on the real one at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
days="${HERALD_LATER_DAYS:-365}"
log() { printf '[later] %s\n' "$*" >&2; }

if [ -n "${HERALD_LATER_RUNNING:-}" ]; then
  # Inside faketime: the clocks have moved.
  log "the wall clock says $(date -u +'%Y-%m-%d %H:%M UTC') (+$days days)"
  trap 'scripts/services.sh stop' EXIT
  scripts/services.sh start
  # shellcheck source=scripts/lib/test-env.sh
  source scripts/lib/test-env.sh
  .build/debug/heraldctl migrate >/dev/null
  [ $# -gt 0 ] || set -- --skip Disruptive
  swift test --skip-build "$@"
  exit
fi

mkdir -p .run/later
shim="$PWD/.run/later/later-clock.so"
gcc -O2 -Wall -Werror -shared -fPIC -o "$shim" scripts/lib/later-clock.c -ldl

restore() {
  log "restarting the servers on the real clock"
  scripts/services.sh start
}
trap restore EXIT
scripts/services.sh stop
# faketime puts its libfaketime after what LD_PRELOAD already holds: the shim comes first.
HERALD_LATER_RUNNING=1 LD_PRELOAD="$shim" faketime -m -f "+${days}d" "$0" "$@"
