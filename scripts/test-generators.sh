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
# built. The document is docs/openapi.yaml, which herald-api carries (the EmbedFiles plugin) and serves.
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
# shellcheck source=scripts/lib/api-fleet.sh
source scripts/lib/api-fleet.sh

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

fleet_prepare herald_generators_test herald-generators-test
export HERALD_API_PORT=18091
fleet_start herald-sms 19111
fleet_start herald-email 19112
fleet_start herald-push 19113
fleet_start herald-api 19116
fleet_wait_ready 19111 19112 19113 19116

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
    for log in api sms email push; do echo "--- herald-$log log"; tail -30 "$WORK/herald-$log.log"; done
fi
exit $status
