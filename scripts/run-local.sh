#!/usr/bin/env bash
# `make run`: migrate, declare, start the local Apple and WhatsApp and all five workers (SMS through
# the local Kannel, with delivery receipts back to herald-api, and one fallback to WhatsApp; the
# dev outbox for email and push;
# herald-apple calls the local Apple), enqueue one job of each flow and show what was
# "delivered", then Sign in with Apple's three jobs. Then keep the workers
# running (logs in .run/logs) until Ctrl-C, which drains them. RUN_ONCE=1 stops after the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services.sh env)"
# The dev run's own settings, passed on deliberately (services.sh env names them HERALD_DEV_*,
# which no configuration key reads): its HMAC keys, and the outbox spool where the codes,
# links and push secrets "delivered" can be read.
export HERALD_SECRETS_HMAC_KEYS_FILE="$HERALD_DEV_HMAC_KEYS_FILE"
export HERALD_OUTBOX_DIRECTORY="$HERALD_DEV_OUTBOX_DIRECTORY"
BIN=.build/debug
# Only what this run starts is built: the five workers, herald-api, heraldctl and the local Apple
# and WhatsApp; not the bench, the chaos harness, the fuzz targets or the tests (issue 47).
read -r -a swift <<<"${SWIFT:-swift}"
for product in herald-sms herald-email herald-push herald-cleanup herald-apple herald-api heraldctl herald-dev-apple herald-dev-stubs; do
  "${swift[@]}" build --product "$product"
done
LOGS=.run/logs
mkdir -p "$LOGS"
# SMS goes through the local Kannel (a real SMS gateway; its fake SMSC is the phone: every message
# in $HERALD_DEV_KANNEL_SMSC_LOG), which reports each message's fate to herald-api's receipt
# endpoint (docs/sms.md, "Delivery receipts"); the dev outbox takes over if Kannel fails.
[ -s .run/secrets/kannel-dlr-secret ] || (umask 077; mkdir -p .run/secrets; openssl rand -hex 32 >.run/secrets/kannel-dlr-secret)
export HERALD_SMS_PROVIDERS=kannel,outbox HERALD_SMS_KANNEL_URL="$HERALD_DEV_KANNEL_URL" HERALD_SMS_KANNEL_USERNAME=herald \
  HERALD_SMS_KANNEL_PASSWORD=herald-dev HERALD_SMS_RECEIPTS_BASE_URL=http://127.0.0.1:8090 \
  HERALD_SMS_RECEIPTS_KANNEL_SECRET_FILE=.run/secrets/kannel-dlr-secret
SMSC_LOG="$HERALD_DEV_KANNEL_SMSC_LOG"
smsc_mark() { wc -l <"$SMSC_LOG" 2>/dev/null || echo 0; }
sms_to() {  # NUMBER MARK: the text of the first SMS the fake SMSC got for NUMBER after line MARK
  for _ in $(seq 1 50); do tail -n +$(($2 + 1)) "$SMSC_LOG" | grep -q "<[^ ]* $1 text " && break; sleep 0.2; done
  tail -n +$(($2 + 1)) "$SMSC_LOG" | grep "<[^ ]* $1 text " | head -1 | sed 's/.* text \(.*\)>$/\1/'
}
code_to() { grep -o '[0-9]\{6\}' <<<"$(sms_to "$1" "$2")" | head -1; }
show_when_delivered() {  # VERIFICATION: show-sms once its last provider call's receipt says delivered (10 s at most)
  for _ in $(seq 1 50); do
    $BIN/heraldctl verify show-sms "$1" --output json \
      | python3 -c 'import json,sys; c=json.load(sys.stdin)["provider_calls"]; sys.exit(0 if c and c[-1].get("delivery_status") == "delivered" else 1)' && break
    sleep 0.2
  done
  $BIN/heraldctl verify show-sms "$1"
}

$BIN/heraldctl migrate
$BIN/heraldctl topology declare

# The local Apple (herald-dev-apple serve: JWKS, token and revoke endpoints, codes and signed
# notifications on request) for the dev team's .p8 key, and herald-apple's token key ring: dev
# secrets made once under .run/apple, like the HMAC keys.
APPLE_DIR=.run/apple
mkdir -p "$APPLE_DIR"
[ -s "$APPLE_DIR/team-key.p8" ] || (umask 077; openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$APPLE_DIR/team-key.p8")
[ -s "$APPLE_DIR/token-keys" ] || (umask 077; echo "dev1:$(openssl rand -base64 32)" >"$APPLE_DIR/token-keys")
rm -f "$APPLE_DIR/url"

pids=()
stop_workers() {
  echo; echo "stopping workers (SIGTERM, they drain in-flight jobs)…"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_workers EXIT

$BIN/herald-dev-apple serve "$APPLE_DIR" >"$LOGS/local-apple.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$APPLE_DIR/url" ] && break; sleep 0.1; done
[ -s "$APPLE_DIR/url" ] || { echo "the local Apple did not start; see $LOGS/local-apple.log"; exit 1; }
APPLE_URL=$(cat "$APPLE_DIR/url")
APPLE_CLIENT=com.example.app
export HERALD_APPLE_CLIENT_IDS=$APPLE_CLIENT HERALD_APPLE_JWKS_URL=$APPLE_URL/auth/keys \
  HERALD_APPLE_TOKEN_URL=$APPLE_URL/auth/token HERALD_APPLE_REVOKE_URL=$APPLE_URL/auth/revoke \
  HERALD_APPLE_ALLOW_INSECURE_TRANSPORT=true HERALD_APPLE_TEAM_ID=DEVTEAM001 HERALD_APPLE_KEY_ID=DEVKEY0001 \
  HERALD_APPLE_PRIVATE_KEY_FILE=$APPLE_DIR/team-key.p8 HERALD_APPLE_TOKEN_KEYS_FILE=$APPLE_DIR/token-keys

# The local WhatsApp (herald-dev-stubs whatsapp: the Cloud API stand-in; its status webhooks,
# signed, to herald-api): the second channel of the fallback demo. What it took, code included,
# is in .run/whatsapp/messages.jsonl (the stand-in phone).
WA_DIR=.run/whatsapp
rm -f "$WA_DIR/url"
$BIN/herald-dev-stubs whatsapp "$WA_DIR" http://127.0.0.1:8090/v1/receipts/whatsapp >"$LOGS/local-whatsapp.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$WA_DIR/url" ] && break; sleep 0.1; done
[ -s "$WA_DIR/url" ] || { echo "the local WhatsApp did not start; see $LOGS/local-whatsapp.log"; exit 1; }
# shellcheck disable=SC1091
source "$WA_DIR/env"

for kind in sms email push cleanup apple api; do
  $BIN/herald-$kind >"$LOGS/$kind.log" 2>&1 &
  pids+=($!)
done

echo "waiting for the workers and herald-api to be ready…"
for port in 9101 9102 9103 9104 9105 9106; do
  for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.2
  done
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { echo "worker on :$port is not ready; see $LOGS"; exit 1; }
done

echo; echo "== enqueueing one job of each flow"
before=$($BIN/heraldctl outbox --limit 100000 --output json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
mark=$(smsc_mark)
demo=$($BIN/heraldctl demo)
echo "$demo"
verification=$(sed -n 's/^sms verification_id: //p' <<<"$demo")
phone=$(sed -n 's/^sms phone_number: //p' <<<"$demo")
for _ in $(seq 1 100); do
  now=$($BIN/heraldctl outbox --limit 100000 --output json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  # email, push; the cleanup demo job is a dry run, recorded in herald.cleanup_runs.
  [ "$now" -ge $((before + 2)) ] && break
  sleep 0.2
done

echo; echo "== what the dev outbox delivered (latest 2)"
$BIN/heraldctl outbox --limit 2

# The phone flow to its end: the code as the phone got it (Kannel's fake SMSC, the only place a
# dev run's codes exist in clear), checked through the check API. A wrong code first. Then the
# attempt as Kannel's delivery reports left it: the SMSC took it (8), the phone got it (1).
echo; echo "== SMS code check for $verification"
echo "the phone shows: $(sms_to "$phone" "$mark")"
code=$(code_to "$phone" "$mark")
$BIN/heraldctl verify sms "$verification" - <<<"000000" || true
$BIN/heraldctl verify sms "$verification" - <<<"$code"
show_when_delivered "$verification"

# Fallback (docs/fallback.md): a verification with the channels [sms, whatsapp] to a number
# Kannel accepts and then reports undelivered (its refusing SMSC: a real DLR 16 to herald-api);
# the same code goes out over WhatsApp at once, and checks.
fb_phone=$(printf '%s01%02d' "$HERALD_DEV_KANNEL_UNDELIVERED" $((RANDOM % 100)))
fb_id="fallback-$(date +%s)-$RANDOM"
echo; echo "== fallback for $fb_id: SMS to $fb_phone (Kannel reports it undelivered), then WhatsApp"
$BIN/heraldctl enqueue sms.verification --json "{\"version\":1,\"verification_id\":\"$fb_id\",\"phone_number\":\"$fb_phone\",\"purpose\":\"sign_in\",\"channels\":[\"sms\",\"whatsapp\"]}" >/dev/null
wa_line() { grep "\"to\":\"${fb_phone#+}\"" "$WA_DIR/messages.jsonl" 2>/dev/null | tail -1; }
for _ in $(seq 1 100); do [ -n "$(wa_line)" ] && break; sleep 0.2; done
[ -n "$(wa_line)" ] || { echo "no WhatsApp message for $fb_phone; see $LOGS/sms.log"; exit 1; }
wa_code=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["code"])' "$(wa_line)")
echo "WhatsApp shows the code $wa_code"
$BIN/heraldctl verify sms "$fb_id" - <<<"$wa_code"
show_when_delivered "$fb_id"

# The same flow over HTTP, as a front API in any language calls it (docs/api.md): an API key,
# /v1 with curl, then one Twilio Verify round trip on the same server.
echo; echo "== herald-api on http://127.0.0.1:8090: an API key, then the SMS flow with curl"
key=$($BIN/heraldctl api-keys create --name make-run --scopes sms,verify --output json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["id"] + ":" + d["secret"])')
echo "key ${key%%:*} (its secret is shown once; heraldctl api-keys list shows the rest)"
echo '$ curl -u KEY -X POST /v1/sms/verifications -d {"phone_number":"+14155550142"}'
mark=$(smsc_mark)
started=$(curl -fsS -u "$key" -H 'Content-Type: application/json' -d '{"phone_number":"+14155550142"}' http://127.0.0.1:8090/v1/sms/verifications)
echo "$started"
vid=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["verification_id"])' "$started")
echo "\$ curl -u KEY -X POST /v1/sms/verifications/$vid/check -d {\"code\":\"…\"}"
curl -sS -u "$key" -H 'Content-Type: application/json' -d "{\"code\":\"$(code_to +14155550142 "$mark")\"}" "http://127.0.0.1:8090/v1/sms/verifications/$vid/check"; echo
echo; echo "== Twilio Verify on the same server (what Twilio's libraries send)"
service=$(curl -fsS -u "$key" -d FriendlyName=Demo http://127.0.0.1:8090/v2/Services | python3 -c 'import json,sys; print(json.load(sys.stdin)["sid"])')
echo "Service $service"
mark=$(smsc_mark)
verification_json=$(curl -fsS -u "$key" --data-urlencode To=+14155550143 -d Channel=sms "http://127.0.0.1:8090/v2/Services/$service/Verifications")
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["status"], d["sid"])' "$verification_json"
curl -sS -u "$key" --data-urlencode To=+14155550143 -d Code="$(code_to +14155550143 "$mark")" "http://127.0.0.1:8090/v2/Services/$service/VerificationCheck" \
  | python3 -c 'import json,sys; d=json.load(sys.stdin); print("VerificationCheck:", d["status"], "valid" if d["valid"] else "not valid")'

# The email flow to its end: the message as the mailbox got it (the dev outbox's spool), its
# link followed: the oobCode consumed for the right address once; a wrong address and a second
# use fail.
request=$(sed -n 's/^email request_id: //p' <<<"$demo")
echo; echo "== email link for $request"
mailbox="$HERALD_OUTBOX_DIRECTORY/email.jsonl"
for _ in $(seq 1 50); do grep -q "\"$request\"" "$mailbox" 2>/dev/null && break; sleep 0.2; done
message=$(grep "\"$request\"" "$mailbox" | tail -1)
python3 -c 'import json,sys; m=json.loads(sys.argv[1]); print("to: %s\nsubject: %s\n\n%s" % (m["to"], m["subject"], m["text"]))' "$message"
link=$(python3 -c 'import json,re,sys; print(re.search(r"https?://\S+", json.loads(sys.argv[1])["text"]).group(0))' "$message")
$BIN/heraldctl verify email-link bob@example.com - <<<"$link" || true
$BIN/heraldctl verify email-link alice@example.com - <<<"$link"
$BIN/heraldctl verify email-link alice@example.com - <<<"$link" || true
$BIN/heraldctl verify show-email "$request"

# App verification to its end: receipt and secret as the device got them (the push spool, the
# stand-in device), confirmed through the confirm API: a wrong secret, the right one, then again.
receipt=$(sed -n 's/^push receipt: //p' <<<"$demo")
echo; echo "== push app verification for receipt $receipt"
pushspool="$HERALD_OUTBOX_DIRECTORY/push.jsonl"
for _ in $(seq 1 50); do grep -q "\"$receipt\"" "$pushspool" 2>/dev/null && break; sleep 0.2; done
payload=$(grep "\"receipt\": *\"$receipt\"" "$pushspool" | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["payload"])')
echo "the device got the silent push: $(python3 -c 'import json,sys; p=json.loads(sys.argv[1]); p["herald"]["secret"]="<secret>"; print(json.dumps(p))' "$payload")"
secret=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["herald"]["secret"])' "$payload")
$BIN/heraldctl verify push "$receipt" - <<<"not-the-secret" || true
$BIN/heraldctl verify push "$receipt" - <<<"$secret"
$BIN/heraldctl verify push "$receipt" - <<<"$secret" || true
$BIN/heraldctl verify show-push "$receipt"

# Sign in with Apple, each job against the local Apple: an account linked to an Apple identity
# and apple.token with a code the local Apple issued (its refresh token stored sealed, shown
# masked); Apple's email-disabled notification (the relay address becomes undeliverable); the
# account deleted through HeraldAccounts, which enqueues apple.revoke (the token revoked at
# Apple and deleted); what the local Apple saw: one exchange, one revocation.
echo; echo "== Sign in with Apple"
link=$($BIN/herald-dev-apple link "$APPLE_URL" "$APPLE_CLIENT")
echo "$link"
apple_account=$(sed -n 's/^apple account_id: //p' <<<"$link")
apple_sub=$(sed -n 's/^apple sub: //p' <<<"$link")
apple_email=$(sed -n 's/^apple relay_email: //p' <<<"$link")
grep -q '^apple.token .*: completed$' <<<"$link" || { echo "apple.token did not complete; see $LOGS/apple.log"; exit 1; }
$BIN/heraldctl verify show-apple "$apple_account"
$BIN/herald-dev-apple notify "$APPLE_URL" "$APPLE_CLIENT" "$apple_account" "$apple_sub" "$apple_email" email-disabled
$BIN/herald-dev-apple delete "$apple_account"
$BIN/heraldctl verify show-apple "$apple_account"
$BIN/herald-dev-apple counts "$APPLE_URL" "$apple_sub"

echo; echo "== cleanup (the demo's dry run)"
$BIN/heraldctl cleanup status --limit 3
echo; echo "== stats"
$BIN/heraldctl stats
echo; echo "metrics:  curl http://127.0.0.1:9101/metrics"
echo "logs:     $LOGS/*.log"

if [ "${RUN_ONCE:-0}" = "1" ]; then exit 0; fi
echo; echo "workers running; Ctrl-C to stop."
wait
