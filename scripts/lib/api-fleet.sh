# shellcheck shell=bash
# A fleet of its own for a test of herald-api from outside (scripts/test-api.sh,
# scripts/test-generators.sh; sourced from the project's root, the servers up, the binaries
# built): a fresh database and broker namespace, the processes it starts stopped on every
# exit path, and a wait for their readiness.
#
#   fleet_prepare DATABASE NAMESPACE   the environment (HERALD_DATABASE_URL, HERALD_AMQP_NAMESPACE,
#                                      the dev key ring, a dev outbox under $WORK), the database made
#                                      afresh and migrated, the topology declared, leftover jobs purged
#   fleet_start NAME PORT [ARGS…]      starts $BIN/NAME with its ops port PORT, log in $WORK/NAME.log
#   fleet_wait_ready PORT…             waits up to 10 s for each ops port's /readyz; else the logs, exit 1
# Needs BIN and WORK set; defines pids and the EXIT trap (which also removes $WORK).

pids=()
fleet_cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap fleet_cleanup EXIT

fleet_prepare() {
    local database=$1 namespace=$2
    eval "$(scripts/services.sh env)"
    export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/$database"
    export HERALD_AMQP_NAMESPACE="$namespace"
    export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
    export HERALD_OUTBOX_DIRECTORY="$WORK/outbox"
    export HERALD_LOG_LEVEL="${HERALD_LOG_LEVEL:-warning}"
    mkdir -p "$HERALD_OUTBOX_DIRECTORY"
    psql -X -q -v ON_ERROR_STOP=1 "${HERALD_DATABASE_URL%/*}/postgres" \
        -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" -c "CREATE DATABASE $database"
    "$BIN/heraldctl" migrate >/dev/null
    "$BIN/heraldctl" topology declare >/dev/null
    # Jobs an earlier run left in this namespace's queues (a kind nobody consumes here keeps them).
    scripts/services.sh rabbitmqctl -q list_queues name messages 2>/dev/null \
        | awk -v ns="$namespace." 'index($1, ns) == 1 && $2 > 0 { print $1 }' \
        | while read -r queue; do scripts/services.sh rabbitmqctl -q purge_queue "$queue" >/dev/null; done || true
}

fleet_start() {
    local name=$1 port=$2; shift 2
    HERALD_HTTP_PORT=$port "$BIN/$name" "$@" >"$WORK/$name.log" 2>&1 &
    pids+=($!)
}

fleet_wait_ready() {
    local port
    for port in "$@"; do
        for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
        curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || {
            echo "$(basename "$0"): :$port is not ready"; tail -20 "$WORK"/*.log; exit 1; }
    done
}
