#!/usr/bin/env bash
# `make test-later` (and make test's last step): the tests as if it were HERALD_LATER_DAYS
# (default 365) days later, the servers included, so that a committed date, expiry or validity
# that meets the wall clock fails that many days before it fails `make test`. Debian's faketime
# moves the clocks; scripts/lib/later-clock.c, preloaded in front of its libfaketime, puts right
# what libfaketime breaks besides (docs/testing.md, "A year later").
#
#   scripts/test-later.sh [swift test arguments]   default: every test but the disruptive ones
#
# Needs faketime (scripts/services.sh install) and the build (swift build --build-tests). The
# servers are restarted under the moved clock, the tests use a database of their own
# (herald_later: its rows and partitions are a year ahead), and whatever happens the servers are
# restarted on the real clock at the end. HERALD_LATER_TIMEOUT (default 1200 s) bounds the run:
# faketime waits for every process that holds its pipe, a worker a test left behind too.
set -euo pipefail
cd "$(dirname "$0")/.."
days="${HERALD_LATER_DAYS:-365}"
log() { printf '[later] %s\n' "$*" >&2; }

if [ -n "${HERALD_LATER_RUNNING:-}" ]; then
  # Inside faketime: the clocks have moved. The servers stay up when this ends; the outer run
  # stops them.
  log "the wall clock says $(date -u +'%Y-%m-%d %H:%M UTC') (+$days days)"
  scripts/services.sh start
  # shellcheck source=scripts/lib/test-env.sh
  source scripts/lib/test-env.sh
  export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_later"
  .build/debug/heraldctl migrate >/dev/null
  [ $# -gt 0 ] || set -- --skip Disruptive
  exec swift test --skip-build "$@"
fi

mkdir -p .run/later
shim="$PWD/.run/later/later-clock.so"
gcc -O2 -Wall -shared -fPIC -o "$shim" scripts/lib/later-clock.c -ldl

restore() {
  log "restarting the servers on the real clock"
  scripts/services.sh stop
  scripts/services.sh start
}
trap restore EXIT
# On the real clock first: what a first start makes (the data directories, the development CAs and
# certificates) must be valid from today, not from a year ahead. A no-op for servers already up.
scripts/services.sh start
scripts/services.sh stop
# faketime puts its libfaketime after what LD_PRELOAD already holds: the shim comes first.
# timeout runs it all in a process group of its own, which it ends as a whole when the time is up
# or when it is told to stop: Ctrl-C here is passed on to it.
HERALD_LATER_RUNNING=1 LD_PRELOAD="$shim" timeout --kill-after=30 "${HERALD_LATER_TIMEOUT:-1200}" \
  faketime -m -f "+${days}d" "$PWD/scripts/test-later.sh" "$@" &
run=$!
trap 'kill -TERM "$run" 2>/dev/null || true' INT TERM
status=0
wait "$run" || status=$?
# A signal ends the first wait early: wait again for the group to end.
while kill -0 "$run" 2>/dev/null; do wait "$run" || status=$?; done
exit "$status"
