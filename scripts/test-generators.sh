#!/usr/bin/env bash
# herald-api through clients generated from its OpenAPI document by two generators its users run
# (make test's `generators` step, docs/api.md): openapi-python-client and OpenAPI Tools'
# openapi-generator (`python`; PyPI's openapi-generator-cli ships the jar, Java runs it), pinned, in
# a venv under .run/. Each generation must print no warning (the two lines openapi-generator prints
# for any document, KNOWN_OPENAPI_GENERATOR below, aside); then each client runs its scenario
# (tests/api/generated_client_*.py): an SMS code, an email link and a push confirmation, started,
# then a wrong code, the right one and the right one again. Starts herald-sms, herald-email,
# herald-push (the dev outbox for all three) and herald-api on a database and broker namespace of
# their own, and stops them on every exit path. The servers are up (make services); the binaries
# built. The document is docs/openapi.yaml, which herald-api serves (embed-openapi.py --check).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BIN="${HERALD_TEST_BIN_DIR:-$ROOT/.build/debug}"
VENV="${HERALD_RUN_DIR:-$ROOT/.run}/venv-generators"
PINS=(openapi-python-client==0.29.1 openapi-generator-cli==7.26.0 urllib3==2.8.0 python-dateutil==2.9.0.post0)
# What openapi-generator 7.26.0 prints for every document, a minimal one too: 3.1 is in beta, and
# a lookup of a schema name it makes itself with none (printed once, or twice, by timing).
KNOWN_OPENAPI_GENERATOR='^\[main\] WARN  o\.o\.codegen\.(DefaultCodegen - OpenAPI 3\.1 support is still in beta\.|utils\.ModelUtils - Failed to get the schema name: null$)'
WORK="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

command -v java >/dev/null || { echo "test-generators: no java (Debian's default-jre-headless: scripts/services.sh install)"; exit 1; }
if [ "$(cat "$VENV/pins" 2>/dev/null)" != "${PINS[*]}" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "${PINS[@]}"
    echo "${PINS[*]}" >"$VENV/pins"
fi
# openapi-python-client runs ruff (a dependency, in the venv) on what it writes.
export PATH="$VENV/bin:$PATH"

CLIENTS="$WORK/clients"
mkdir -p "$CLIENTS"
echo "--- openapi-python-client $(openapi-python-client --version | awk '{print $NF}')"
generated=0
openapi-python-client generate --path docs/openapi.yaml --meta none --config tests/api/openapi-python-client.yaml \
    --output-path "$CLIENTS/herald_opc_client" >"$WORK/opc.log" 2>&1 || generated=$?
cat "$WORK/opc.log"
if [ $generated -ne 0 ] || grep -v '^Generating ' "$WORK/opc.log" | grep -qiE 'warning|error|skipping'; then
    echo "test-generators: openapi-python-client did not generate the client cleanly (above)"; exit 1
fi
echo "--- openapi-generator $(openapi-generator-cli version)"
openapi-generator-cli validate -i docs/openapi.yaml --recommend >"$WORK/validate.log" 2>&1 || true
cat "$WORK/validate.log"
grep -q '^No validation issues detected\.$' "$WORK/validate.log" || { echo "test-generators: openapi-generator's validation is not clean (above)"; exit 1; }
openapi-generator-cli generate -g python -i docs/openapi.yaml -o "$CLIENTS/ogen" --package-name herald_ogen_client \
    >"$WORK/ogen.log" 2>&1 || generated=$?
unexpected="$(grep -E ' WARN | ERROR |Exception' "$WORK/ogen.log" | grep -vE "$KNOWN_OPENAPI_GENERATOR" || true)"
if [ $generated -ne 0 ] || [ -n "$unexpected" ]; then
    tail -40 "$WORK/ogen.log"
    echo "test-generators: openapi-generator did not generate the client cleanly:"; echo "$unexpected"; exit 1
fi
echo "generated: $(find "$CLIENTS" -name '*.py' | wc -l) Python files, no warning"

eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_generators_test"
export HERALD_AMQP_NAMESPACE="herald-generators-test"
export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
export HERALD_OUTBOX_DIRECTORY="$WORK/outbox"
export HERALD_LOG_LEVEL="${HERALD_LOG_LEVEL:-warning}"
export HERALD_API_PORT=18091
mkdir -p "$HERALD_OUTBOX_DIRECTORY"
ADMIN_URL="${HERALD_DATABASE_URL%/*}/postgres"
psql -X -q -v ON_ERROR_STOP=1 "$ADMIN_URL" -c "DROP DATABASE IF EXISTS herald_generators_test WITH (FORCE)" \
    -c "CREATE DATABASE herald_generators_test"
"$BIN/heraldctl" migrate >/dev/null
"$BIN/heraldctl" topology declare >/dev/null
# Jobs an earlier run left in this namespace's queues.
scripts/services.sh rabbitmqctl -q list_queues name messages 2>/dev/null \
    | awk -v ns="$HERALD_AMQP_NAMESPACE." 'index($1, ns) == 1 && $2 > 0 { print $1 }' \
    | while read -r queue; do scripts/services.sh rabbitmqctl -q purge_queue "$queue" >/dev/null; done || true

HERALD_HTTP_PORT=19111 "$BIN/herald-sms" >"$WORK/sms.log" 2>&1 & pids+=($!)
HERALD_HTTP_PORT=19112 "$BIN/herald-email" >"$WORK/email.log" 2>&1 & pids+=($!)
HERALD_HTTP_PORT=19113 "$BIN/herald-push" >"$WORK/push.log" 2>&1 & pids+=($!)
HERALD_HTTP_PORT=19116 "$BIN/herald-api" >"$WORK/api.log" 2>&1 & pids+=($!)
for port in 19111 19112 19113 19116; do
    for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || {
        echo "test-generators: :$port is not ready"; tail -20 "$WORK"/{api,sms,email,push}.log; exit 1; }
done

HERALD_API_KEY="$("$BIN/heraldctl" api-keys create --name generated-clients --scopes sms,email,push --output json \
    | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['id']+':'+d['secret'])")"
export HERALD_API_KEY HERALD_API_URL="http://127.0.0.1:$HERALD_API_PORT"
export PYTHONPATH="$ROOT/tests/api:$CLIENTS:$CLIENTS/ogen"
status=0
for scenario in opc openapi_generator; do
    echo "--- tests/api/generated_client_$scenario.py"
    "$VENV/bin/python" "tests/api/generated_client_$scenario.py" || status=1
done
if [ $status -ne 0 ]; then
    for log in api sms email push; do echo "--- herald-$log log"; tail -30 "$WORK/$log.log"; done
fi
exit $status
