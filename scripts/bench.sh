#!/usr/bin/env bash
# `make bench`: release build, then herald-bench against the local servers. Every figure
# comes with a baseline measured in the same invocation; read the ratios.
# BENCH_STATEMENTS=1 adds the top pg_stat_statements of each SMS run (docs/benchmarks.md).
# BENCH_ONLY=api measures herald-api (a release process) under wrk next to a bare Hummingbird route (docs/benchmarks.md).
# BENCH_ONLY=peer measures the Go peer (bench/peers/go) and the Swift peer (Sources/herald-peer-swift), 16 and 64 in flight, next to herald-sms, 2 processes, controls on, and prints Herald ÷ Go (docs/benchmarks.md); the whole bench runs them beside the processes part.
# BENCH_ONLY=email measures herald-email's SMTP client, then email jobs end to end through herald-email workers, against the local SMTP server (HERALD_DEV_SMTP_* of services.sh env).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_bench"
# The herald-sms processes it starts hash codes with the dev HMAC keys.
export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
# BENCH_STATEMENTS=1 (pg_stat_statements per SMS run) needs the library preloaded: checked
# before the build. scripts/services.sh configures it; a server started before loads it on restart.
if [ "${BENCH_STATEMENTS:-0}" = 1 ]; then
  loaded="$(psql "$HERALD_DATABASE_URL" -tAc 'SHOW shared_preload_libraries' 2>&1 || true)"
  if [[ "$loaded" != *pg_stat_statements* ]]; then
    echo "bench: BENCH_STATEMENTS=1 but pg_stat_statements is not loaded in the running PostgreSQL (shared_preload_libraries: '$loaded')." >&2
    echo "bench: scripts/services.sh configures it (.run/postgres/herald-stats.conf); a server started before needs a restart: make stop && make bench" >&2
    exit 1
  fi
fi
# BENCH_SCRATCH_PATH: another build folder than .build (e.g. .build-bench, beside a debug build
# that must not wait for this one); its release/ holds the executables herald-bench starts.
scratch=()
bin=.build/release
if [ -n "${BENCH_SCRATCH_PATH:-}" ]; then
  scratch=(--scratch-path "$BENCH_SCRATCH_PATH")
  bin="$BENCH_SCRATCH_PATH/release"
fi
swift build -c release "${scratch[@]}" --product herald-bench
swift build -c release "${scratch[@]}" --product heraldctl
swift build -c release "${scratch[@]}" --product herald-sms
# BENCH_ONLY=api (and the whole bench) starts herald-api as a release process, loaded by wrk.
if [ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_ONLY}" = api ]; then
  swift build -c release "${scratch[@]}" --product herald-api
  command -v wrk >/dev/null || { echo "bench: wrk is missing (scripts/services.sh install-bench installs it)" >&2; exit 1; }
fi
# BENCH_ONLY=peer (and the whole bench): the Go peer, built beside the release executables (GOPATH
# mode on Debian's Go libraries, no module download), where herald-bench finds it; then the Swift peer.
if [ -z "${BENCH_ONLY:-}" ] || [ "${BENCH_ONLY}" = peer ]; then
  command -v go >/dev/null || { echo "bench: go is missing (scripts/services.sh install-bench installs it and the peer's libraries)" >&2; exit 1; }
  peer="$(cd "$bin" && pwd)/herald-peer-go"
  (cd bench/peers/go && GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$peer" main.go)
  # The Swift peer: the same job on herald-sms's libraries (Sources/herald-peer-swift).
  swift build -c release "${scratch[@]}" --product herald-peer-swift
fi
"$bin/heraldctl" migrate
mkdir -p bench-results
"$bin/herald-bench" "${BENCH_COUNT:-20000}" | tee "bench-results/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
