#!/usr/bin/env bash
# `make chaos`: the fault and load harness (herald-chaos) on the local servers, database
# herald_chaos. Restarts, stops and pauses RabbitMQ and PostgreSQL: run nothing else beside it.
#   scripts/chaos.sh [--short] [--jobs N] [--poison N] [--scenarios kill,broker,...]
# Exits non-zero when anything was lost or any check failed; the report is printed and kept
# under .run/chaos/<namespace>/ with the worker logs.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_chaos"
export HERALD_SERVICES_SCRIPT="$PWD/scripts/services.sh"
swift build --product herald-chaos
for product in herald-sms herald-email herald-push herald-cleanup heraldctl; do swift build --product "$product"; done
# A fresh schema each run: the figures and the secrecy dump are this run's alone.
psql "$HERALD_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS herald CASCADE; DROP TABLE IF EXISTS public.herald_schema_migrations;" >/dev/null
.build/debug/heraldctl migrate >/dev/null
exec .build/debug/herald-chaos "$@"
