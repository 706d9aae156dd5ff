#!/usr/bin/env bash
# `make bench`: release build, then herald-bench against the local servers. Every figure
# comes with a baseline measured in the same invocation; read the ratios.
# BENCH_ONLY=email measures herald-email's SMTP client against the local SMTP server (HERALD_DEV_SMTP_* of services.sh env).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_bench"
# The herald-sms processes it starts hash codes with the dev HMAC keys.
export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
swift build -c release --product herald-bench
swift build -c release --product heraldctl
swift build -c release --product herald-sms
.build/release/heraldctl migrate
mkdir -p bench-results
.build/release/herald-bench "${BENCH_COUNT:-20000}" | tee "bench-results/bench-$(date -u +%Y%m%dT%H%M%SZ).txt"
