#!/usr/bin/env bash
# `make chaos`: the fault and load harness (herald-chaos) on the local servers, database
# herald_chaos. Restarts, stops and pauses RabbitMQ and PostgreSQL: run nothing else beside it.
#   scripts/chaos.sh [--short] [--jobs N] [--poison N] [--poison-valid N] [--outage SECONDS] [--scenarios kill,broker,...]
#   scripts/chaos.sh --cluster [--short] [--scenarios cluster-kill,...]   `make chaos-cluster`: the fleet on a
#     three-node RabbitMQ cluster and a PostgreSQL primary with a synchronous standby (scripts/cluster.sh,
#     started here and stopped after), amqp.url and database.url listing their nodes; scenarios
#     cluster-kill, cluster-partition, cluster-rolling, cluster-failover (docs/reliability.md)
# Exits non-zero when anything was lost or any check failed; the report is printed and kept
# under .run/chaos/<namespace>/ with the worker logs.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_chaos"
# The dev HMAC keys, for the workers and the harness's own checks (services.sh env names them
# HERALD_DEV_HMAC_KEYS_FILE, which no configuration key reads).
export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
export HERALD_SERVICES_SCRIPT="$PWD/scripts/services.sh"
cluster=0
arguments=()
for argument in "$@"; do
  if [ "$argument" = --cluster ]; then cluster=1; else arguments+=("$argument"); fi
done
set -- "${arguments[@]}"
# The workers' operations ports, next to the broker's, so runs on other servers' ports
# (HERALD_AMQP_PORT) do not collide.
export HERALD_CHAOS_BASE_PORT="${HERALD_CHAOS_BASE_PORT:-$(( ${HERALD_AMQP_PORT:-55672} - 36400 ))}"
# The full run times the fleet (the poison scenario's throughput): release builds, as
# operators run them. The short run inside make test uses the debug builds it already has.
# HERALD_CHAOS_BUILD=debug|release overrides.
build="${HERALD_CHAOS_BUILD:-release}"
for argument in "$@"; do [ "$argument" = --short ] && build="${HERALD_CHAOS_BUILD:-debug}"; done
for product in herald-chaos herald-sms herald-email herald-push herald-cleanup herald-apple herald-api heraldctl; do swift build -c "$build" --product "$product"; done
if [ "$cluster" = 1 ]; then
  # On the clusters: their nodes are the broker and the database of the fleet and of the harness.
  export HERALD_CLUSTER_SCRIPT="$PWD/scripts/cluster.sh"
  trap 'scripts/cluster.sh stop' EXIT
  scripts/cluster.sh start
  HERALD_AMQP_URL="$(scripts/cluster.sh rabbit-urls)"
  # Both PostgreSQL hosts (the relay picks the primary); TLS checked against the name in the cluster's certificate.
  HERALD_DATABASE_URL="$(scripts/cluster.sh pg-urls herald_chaos)"
  export HERALD_DATABASE_URL HERALD_DATABASE_TLS=require
  export HERALD_DATABASE_TLS_CA_FILE="${HERALD_RUN_DIR:-$PWD/.run}/cluster/pg-tls/server.pem" HERALD_AMQP_URL
  admin="$(scripts/cluster.sh pg-urls postgres)?target_session_attrs=read-write"
  psql "$admin" -qtAc "SELECT 1 FROM pg_database WHERE datname = 'herald_chaos'" | grep -q 1 || psql "$admin" -qc "CREATE DATABASE herald_chaos" >/dev/null
  case " $* " in *" --scenarios "*) ;; *) set -- "$@" --scenarios cluster-kill,cluster-partition,cluster-rolling,cluster-failover ;; esac
fi
# A fresh schema each run: the figures and the secrecy dump are this run's alone.
PGOPTIONS="-c client_min_messages=warning" psql "$HERALD_DATABASE_URL?target_session_attrs=read-write" -qc "DROP SCHEMA IF EXISTS herald CASCADE; DROP TABLE IF EXISTS public.herald_schema_ledger, public.herald_schema_migrations;" >/dev/null
".build/$build/heraldctl" migrate >/dev/null
if [ "$cluster" = 0 ]; then exec ".build/$build/herald-chaos" "$@"; fi
".build/$build/herald-chaos" "$@"
