#!/usr/bin/env bash
# herald-api against a client nobody here wrote (make test's `api` step, docs/api.md): Twilio's
# own Python library (`twilio` from PyPI, in a venv under .run/) with its Verify base URL pointed
# at herald-api, and Herald's /v1 from a plain HTTP client (tests/api/twilio_verify_acceptance.py);
# then the server against its OpenAPI document, by schemathesis (PyPI, same venv;
# tests/api/schemathesis.toml; HERALD_SCHEMATHESIS_EXAMPLES, HERALD_SCHEMATHESIS_ARGS).
# Starts herald-sms (dev outbox for SMS; the Twilio Calls and WhatsApp stand-ins of herald-dev-stubs
# for calls and WhatsApp), herald-email (dev outbox: Verify's email channel) and herald-api on a database and broker namespace of their own,
# and stops them on every exit path. The servers are up (make services); the binaries built.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BIN="${HERALD_TEST_BIN_DIR:-$ROOT/.build/debug}"
VENV="${HERALD_RUN_DIR:-$ROOT/.run}/venv-api"
TWILIO_VERSION=9.13.0
SCHEMATHESIS_VERSION=4.32.5
WORK="$(mktemp -d)"
# shellcheck source=scripts/lib/api-fleet.sh
source scripts/lib/api-fleet.sh

fleet_prepare herald_api_test herald-api-test
export HERALD_API_PORT=18090
# Delivery receipts on (docs/sms.md): herald-api checks Twilio's signature with this token over
# this base URL; the acceptance script signs a status callback with Twilio's own RequestValidator.
export HERALD_SMS_RECEIPTS_BASE_URL="http://127.0.0.1:$HERALD_API_PORT" HERALD_SMS_TWILIO_AUTH_TOKEN="acceptance-twilio-token"

if ! "$VENV/bin/python" -c "import twilio, sys; sys.exit(twilio.__version__ != '$TWILIO_VERSION')" 2>/dev/null \
    || [ "$("$VENV/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "twilio==$TWILIO_VERSION" "schemathesis==$SCHEMATHESIS_VERSION"
fi

# Twilio's Calls API and WhatsApp's Cloud API as stand-in processes (herald-dev-stubs): Verify's
# call and whatsapp channels, their messages (codes included) in each one's messages.jsonl.
STUBS="$WORK/stubs"
"$BIN/herald-dev-stubs" twilio "$STUBS/twilio" "$HERALD_SMS_TWILIO_AUTH_TOKEN" >"$WORK/twilio.log" 2>&1 & pids+=($!)
"$BIN/herald-dev-stubs" whatsapp "$STUBS/whatsapp" "http://127.0.0.1:$HERALD_API_PORT/v1/receipts/whatsapp" >"$WORK/whatsapp.log" 2>&1 & pids+=($!)
for stub in twilio whatsapp; do
    for _ in $(seq 1 100); do [ -s "$STUBS/$stub/url" ] && break; sleep 0.1; done
    [ -s "$STUBS/$stub/url" ] || { echo "test-api: the $stub stand-in did not start"; cat "$WORK/$stub.log"; exit 1; }
    # shellcheck disable=SC1090
    source "$STUBS/$stub/env"
done
export HERALD_SMS_VOICE_FROM=+15005550006 HERALD_TWILIO_STUB="$STUBS/twilio" HERALD_WHATSAPP_STUB="$STUBS/whatsapp"

fleet_start herald-sms 19101
# herald-email (dev outbox) for Verify's email channel: its codes in the outbox's email.jsonl.
fleet_start herald-email 19102
# The key's request rate and the refused authentications' out of the way of schemathesis's two
# workers (api.key_rate_*, api.auth_failures.*), and Apple's key set on a closed local port (a
# token that gets that far is a 503, never a fetch).
HERALD_API_KEY_RATE_PER_SECOND=100000 HERALD_API_KEY_RATE_BURST=1000000 \
    HERALD_API_AUTH_FAILURES_RATE_PER_SECOND=100000 HERALD_API_AUTH_FAILURES_BURST=1000000 \
    HERALD_APPLE_JWKS_URL=http://127.0.0.1:9/auth/keys fleet_start herald-api 19106
fleet_wait_ready 19101 19102 19106

key() { "$BIN/heraldctl" api-keys create --name "$1" --scopes "$2" --output json | python3 -c "import json,sys;d=json.load(sys.stdin);print(d['id']+':'+d['secret'])"; }
export HERALD_API_KEY="$(key acceptance all)" HERALD_API_SMS_KEY="$(key sms-only sms)" HERALD_API_REVOKED_KEY="$(key revoked all)"
"$BIN/heraldctl" api-keys revoke "${HERALD_API_REVOKED_KEY%%:*}" >/dev/null
export HERALD_API_URL="http://127.0.0.1:$HERALD_API_PORT" HERALD_OUTBOX_SMS="$HERALD_OUTBOX_DIRECTORY/sms.jsonl" \
    HERALD_OUTBOX_EMAIL="$HERALD_OUTBOX_DIRECTORY/email.jsonl"
status=0
"$VENV/bin/python" tests/api/twilio_verify_acceptance.py || status=$?
# The contract: schemathesis (PyPI; tests/api/schemathesis.toml) reads the document herald-api
# serves and sends every operation generated requests, valid and invalid (coverage, fuzzing,
# then chains along the document's links). A 5xx, an answer the document does not allow
# (status, content type, headers, body), an invalid request answered 2xx or a request without
# the key answered other than 401 fails the step. Short: at most HERALD_SCHEMATHESIS_EXAMPLES
# cases per operation and phase. The requests reach only this script's database and namespace.
export HERALD_API_KEY_ID="${HERALD_API_KEY%%:*}" HERALD_API_KEY_SECRET="${HERALD_API_KEY#*:}"
HERALD_SCHEMATHESIS_SERVICE="$(curl -fsS -u "$HERALD_API_KEY" -d FriendlyName=schemathesis "$HERALD_API_URL/v2/Services" \
    | python3 -c "import json, sys; print(json.load(sys.stdin)['sid'])")"
export HERALD_SCHEMATHESIS_SERVICE
(cd "$WORK" && "$VENV/bin/schemathesis" --config-file "$ROOT/tests/api/schemathesis.toml" --no-color run "$HERALD_API_URL/openapi.yaml" \
    --url "$HERALD_API_URL" --max-examples "${HERALD_SCHEMATHESIS_EXAMPLES:-100}" ${HERALD_SCHEMATHESIS_ARGS:-}) || status=$?
if [ $status -ne 0 ]; then
    for log in api sms email; do echo "--- herald-$log log"; tail -30 "$WORK/herald-$log.log"; done
fi
exit $status
