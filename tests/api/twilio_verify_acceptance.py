#!/usr/bin/env python3
"""Twilio Verify compatibility, accepted by a client nobody here wrote: Twilio's own Python
library (`twilio` from PyPI) with its Verify base URL pointed at herald-api. Also Herald's own
/v1 answers to a plain HTTP client. Run by scripts/test-api.sh (make test), which starts the
servers, herald-sms (outbox provider; the Twilio Calls and WhatsApp stand-ins of herald-dev-stubs)
and herald-api, and makes the keys.

    HERALD_API_URL  HERALD_API_KEY (id:secret, every scope)  HERALD_API_SMS_KEY (id:secret, sms only)
    HERALD_API_REVOKED_KEY (id:secret, revoked)  HERALD_OUTBOX_SMS (the dev outbox's sms.jsonl)
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from twilio.base.exceptions import TwilioRestException
from twilio.request_validator import RequestValidator
from twilio.rest import Client

URL = os.environ["HERALD_API_URL"]
KEY_ID, KEY_SECRET = os.environ["HERALD_API_KEY"].split(":", 1)
OUTBOX = os.environ["HERALD_OUTBOX_SMS"]
checks = []


def check(name, condition, detail=""):
    checks.append((name, bool(condition)))
    print(("ok   " if condition else "FAIL ") + name + (f"  ({detail})" if detail and not condition else ""))


def code_for(attempt_sid, timeout=20.0):
    """The code herald-sms wrote to the dev outbox for this send attempt (its verification id)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(OUTBOX):
            with open(OUTBOX) as f:
                for line in f:
                    entry = json.loads(line)
                    if entry.get("verification_id") == attempt_sid:
                        return entry["text"].split()[0]
        time.sleep(0.1)
    raise AssertionError(f"no SMS in the outbox for {attempt_sid}")


def stub_message(directory, channel, to, timeout=20.0):
    """The latest message a herald-dev-stubs stand-in took for `to` on `channel`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        path = os.path.join(directory, "messages.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                found = [m for m in map(json.loads, f) if m.get("channel") == channel and m.get("to") == to]
            if found:
                return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"no {channel} message for {to} in {directory}")


def outbox_email(to, timeout=20.0):
    """The latest email the dev outbox took for `to` (HERALD_OUTBOX_EMAIL: the mailbox, codes in full)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        path = os.environ["HERALD_OUTBOX_EMAIL"]
        if os.path.exists(path):
            with open(path) as f:
                found = [m for m in map(json.loads, f) if m.get("to") == to]
            if found:
                return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"no email in the outbox for {to}")


def digits(text):
    return [c for c in text if c.isdigit()]


def twilio_error(call):
    try:
        call()
    except TwilioRestException as error:
        return error
    return None


# Twilio's helper library, as a team using Twilio Verify has it: one line changes.
client = Client("AC" + KEY_ID[2:], KEY_SECRET)
client.verify.base_url = URL
verify = client.verify.v2

service = verify.services.create(friendly_name="Acceptance", code_length=6)
check("service created with a VA sid", service.sid.startswith("VA") and len(service.sid) == 34, service.sid)
check("service settings read back", service.friendly_name == "Acceptance" and service.code_length == 6)
check("service fetched", verify.services(service.sid).fetch().friendly_name == "Acceptance")
check("service listed", any(s.sid == service.sid for s in verify.services.list(limit=50)))
check("service dates parsed", hasattr(service.date_created, "year"), repr(service.date_created))
svc = verify.services(service.sid)

# Start, read the code, a wrong one, the right one, then again.
number = "+14155550101"
started = svc.verifications.create(to=number, channel="sms")
check("verification pending with a VE sid", started.status == "pending" and started.sid.startswith("VE"), started.status)
check("one send attempt listed", len(started.send_code_attempts) == 1)
code = code_for(started.send_code_attempts[0]["attempt_sid"])
check("code has the service's length", len(code) == 6, code and len(code))
wrong = "000000" if code != "000000" else "111111"
answer = svc.verification_checks.create(to=number, code=wrong)
check("wrong code: pending, not valid", answer.status == "pending" and answer.valid is False, answer.status)
answer = svc.verification_checks.create(verification_sid=started.sid, code=code)
check("right code: approved, valid", answer.status == "approved" and answer.valid is True, answer.status)
error = twilio_error(lambda: svc.verification_checks.create(to=number, code=code))
check("check after approval: 20404", error is not None and error.code == 20404 and error.status == 404, error)
error = twilio_error(lambda: svc.verifications(started.sid).fetch())
check("fetch after approval: 20404", error is not None and error.code == 20404, error)

# Exhaust the checks: five wrong, then 60202.
number = "+14155550102"
started = svc.verifications.create(to=number, channel="sms")
code = code_for(started.send_code_attempts[0]["attempt_sid"])
wrong = "000000" if code != "000000" else "111111"
statuses = [svc.verification_checks.create(to=number, code=wrong).status for _ in range(5)]
check("five wrong checks: the fifth reaches max_attempts_reached", statuses == ["pending"] * 4 + ["max_attempts_reached"], statuses)
error = twilio_error(lambda: svc.verification_checks.create(to=number, code=code))
check("sixth check: 60202, even with the right code", error is not None and error.code == 60202 and error.status == 429, error)

# Exhaust the sends: the same To while pending is the same verification. herald-sms's
# sms.fallback.max_paid_sends (2: a code's first send, its resends and its fallback's channels)
# refuses the third send, answered at create time as Twilio does (60203), and the refused send is
# not listed; the code the second carried still verifies.
number = "+14155550103"
sids = [svc.verifications.create(to=number, channel="sms").sid for _ in range(2)]
check("resends keep the verification", len(set(sids)) == 1, sids)
check("each send listed", len(svc.verifications(sids[0]).fetch().send_code_attempts) == 2)
error = twilio_error(lambda: svc.verifications.create(to=number, channel="sms"))
check("third send refused at create: 60203", error is not None and error.code == 60203 and error.status == 429, error)
attempts = svc.verifications(sids[0]).fetch().send_code_attempts
check("the refused send is not listed", len(attempts) == 2, attempts)
code = code_for(attempts[1]["attempt_sid"])
try:
    status = svc.verification_checks.create(to=number, code=code).status
except TwilioRestException as error:
    status = f"error {error.code}"
check("a refused resend leaves the code before it live", status == "approved", status)

# A limit is answered at create time: sms.limits.ip (20 an hour) counts DeviceIp, the end
# user's address as the front API names it; the 21st start from one address is 20429.
answers = []
for n in range(21):
    error = twilio_error(lambda: svc.verifications.create(to=f"+1415555{n + 120:04d}", channel="sms", device_ip="203.0.113.99"))
    answers.append(error.code if error else 201)
check("past sms.limits.ip: 20429 at create", answers == [201] * 20 + [20429], answers)

# Bad input and what Herald does not offer.
error = twilio_error(lambda: svc.verifications.create(to="+1555", channel="sms"))
check("invalid number: 60200", error is not None and error.code == 60200 and error.status == 400, error)
error = twilio_error(lambda: svc.verifications.create(to="+14155550104", channel="sna"))
check("channel not offered: 60223", error is not None and error.code == 60223, error)
error = twilio_error(lambda: verify.services.create(friendly_name="x", code_length=3))
check("CodeLength 3: 60200", error is not None and error.code == 60200, error)
error = twilio_error(lambda: verify.services("VA" + "0" * 32).fetch())
check("unknown service: 20404", error is not None and error.code == 20404, error)

# The call and whatsapp channels (the stand-ins of herald-dev-stubs): the code read out in a call,
# in the verification's language; a resend over WhatsApp is the second send attempt, the
# verification's channel the last one used; the code WhatsApp carried approves it.
number = "+14155550106"
started = svc.verifications.create(to=number, channel="call", locale="fr")
check("call: pending, channel call", started.status == "pending" and started.channel == "call", started.channel)
call = stub_message(os.environ["HERALD_TWILIO_STUB"], "voice", number)
spoken = call["text"].split(" / ")
check("call: the code read twice, a digit at a time, in French",
      len(spoken) == 2 and spoken[0] == spoken[1] and spoken[0].startswith("Votre code") and ", ".join(digits(spoken[0])) in spoken[0], call["text"])
resent = svc.verifications.create(to=number, channel="whatsapp")
check("whatsapp resend: the same verification, channel whatsapp", resent.sid == started.sid and resent.channel == "whatsapp", resent.channel)
check("send_code_attempts lists both channels", [a["channel"] for a in resent.send_code_attempts] == ["call", "whatsapp"],
      resent.send_code_attempts)
message = stub_message(os.environ["HERALD_WHATSAPP_STUB"], "whatsapp", number[1:])
answer = svc.verification_checks.create(to=number, code=message["code"])
check("whatsapp's code: approved", answer.status == "approved" and answer.channel == "whatsapp", answer.status)

# The email channel: a one-time code by email (herald-email, the dev outbox the mailbox); a wrong
# code, then the right one.
address = "verify.acceptance@example.com"
started = svc.verifications.create(to=address, channel="email")
check("email: pending, channel email, To the address", started.status == "pending" and started.channel == "email" and started.to == address,
      (started.status, started.channel, started.to))
mail = outbox_email(address)
code = next((w for w in mail["text"].split() if w.isdigit() and len(w) == 6), None)
check("email: a 6-digit code in the message", code is not None, mail["text"][:200])
answer = svc.verification_checks.create(to=address, code="000000" if code != "000000" else "111111")
check("email: wrong code pending", answer.status == "pending" and answer.valid is False, answer.status)
answer = svc.verification_checks.create(to=address, code=code)
check("email: right code approved", answer.status == "approved" and answer.channel == "email", answer.status)

# A code belongs to its service: service B's verification of the same number is sent a code of
# its own, and neither code approves the other service's verification.
other = verify.services(verify.services.create(friendly_name="Acceptance B").sid)
number = "+14155550107"
mine = svc.verifications.create(to=number, channel="sms")
theirs = other.verifications.create(to=number, channel="sms")
code_a = code_for(mine.send_code_attempts[0]["attempt_sid"])
code_b = code_for(theirs.send_code_attempts[0]["attempt_sid"])
if code_a != code_b:
    answer = other.verification_checks.create(to=number, code=code_a)
    check("service B with service A's code: pending", answer.status == "pending" and answer.valid is False, answer.status)
    answer = svc.verification_checks.create(to=number, code=code_b)
    check("service A with service B's code: pending", answer.status == "pending" and answer.valid is False, answer.status)
answer = svc.verification_checks.create(to=number, code=code_a)
check("service A's own code: approved", answer.status == "approved", answer.status)
answer = other.verification_checks.create(to=number, code=code_b)
check("service B's own code: approved", answer.status == "approved", answer.status)

# Cancel: the code dies with it.
number = "+14155550105"
started = svc.verifications.create(to=number, channel="sms")
code = code_for(started.send_code_attempts[0]["attempt_sid"])
canceled = svc.verifications(started.sid).update(status="canceled")
check("canceled", canceled.status == "canceled", canceled.status)
error = twilio_error(lambda: svc.verification_checks.create(to=number, code=code))
check("check after cancel: 20404", error is not None and error.code == 20404, error)

# Authentication.
stranger = Client("AC" + "0" * 32, "not-a-secret")
stranger.verify.base_url = URL
error = twilio_error(lambda: stranger.verify.v2.services(service.sid).fetch())
check("unknown key: 20003", error is not None and error.code == 20003 and error.status == 401, error)
revoked_id, revoked_secret = os.environ["HERALD_API_REVOKED_KEY"].split(":", 1)
revoked = Client(revoked_id, revoked_secret)
revoked.verify.base_url = URL
error = twilio_error(lambda: revoked.verify.v2.services(service.sid).fetch())
check("revoked key: 20003", error is not None and error.code == 20003, error)


# Herald's own /v1, from a plain HTTP client.
def call(method, path, body=None, key=os.environ["HERALD_API_KEY"], headers=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(URL + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", "Basic " + base64.b64encode(key.encode()).decode())
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read() or b"{}"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}"), error.headers


status, body, _ = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550106", "verification_id": "acc-v1-1"})
# The start answers herald-sms's decision (docs/api.md, "Starts answer with the decision").
check("v1 start: 200 sending", (status, body) == (200, {"verification_id": "acc-v1-1", "status": "sending", "channel": "sms"}), (status, body))
code = code_for("acc-v1-1")
status, body, _ = call("POST", "/v1/sms/verifications/acc-v1-1/check", {"code": "000000" if code != "000000" else "111111"})
check("v1 wrong code: attempts left", status == 200 and body.get("result") == "wrong_code" and body.get("attempts_left") == 4, body)
status, body, _ = call("GET", "/v1/sms/verifications/acc-v1-1")
check("v1 show: masked, no code", status == 200 and body.get("state") == "sent" and code not in json.dumps(body) and "+14155550106" not in json.dumps(body), body)
status, body, _ = call("POST", "/v1/sms/verifications/acc-v1-1/check", {"code": code})
check("v1 right code: verified", status == 200 and body.get("result") == "verified" and body.get("purpose") == "sign_in", body)
status, body, _ = call("POST", "/v1/sms/verifications/acc-v1-1/check", {"code": code})
check("v1 again: already_used", body.get("result") == "already_used", body)
status, body, _ = call("POST", "/v1/sms/verifications/nope/check", {"code": "123456"})
check("v1 unknown: 404 not_found", status == 404 and body.get("result") == "not_found", body)
first = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550107"}, headers={"Idempotency-Key": "order-77"})[1]
second = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550107"}, headers={"Idempotency-Key": "order-77"})[1]
check("v1 Idempotency-Key: one id", first.get("verification_id") == second.get("verification_id"), (first, second))
status, body, _ = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550108", "debug": True})
check("v1 unknown field: 400 naming it", status == 400 and body["error"].get("field") == "debug", body)
status, body, _ = call("POST", "/v1/sms/verifications", {"phone_number": 14155550108})
check("v1 wrong type: 400 naming it", status == 400 and body["error"].get("field") == "phone_number", body)
status, body, _ = call("POST", "/v1/sms/verifications", {"phone_number": "+1555"})
check("v1 invalid number: 400 naming it", status == 400 and body["error"].get("field") == "phone_number", body)
status, body, _ = call("POST", "/v1/sms/verifications", raw=b'{"phone_number": "' + b"1" * 70000 + b'"}')
check("v1 body over the limit: 413", status == 413 and body["error"]["code"] == "body_too_large", (status, body))
status, body, headers = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550108"}, key=None)
check("v1 no key: 401", status == 401 and "Basic" in (headers.get("WWW-Authenticate") or ""), (status, body))
status, body, _ = call("POST", "/v1/sms/verifications", {"phone_number": "+14155550108"}, key=os.environ["HERALD_API_REVOKED_KEY"])
check("v1 revoked key: 401", status == 401, (status, body))
status, body, _ = call("POST", "/v1/email/actions", {"email": "a@example.com", "mode": "sign_in"}, key=os.environ["HERALD_API_SMS_KEY"])
check("v1 key without the scope: 403", status == 403 and body["error"]["code"] == "forbidden", (status, body))
# A continue URL on email.authorized_domains (Config/herald.yaml: localhost): herald-email sends.
status, body, _ = call("POST", "/v1/email/actions", {"email": "a@example.com", "mode": "sign_in", "action_code_settings": {"url": "https://localhost/finish"}})
check("v1 email action: 200 sending", (status, body.get("status"), body.get("channel")) == (200, "sending", "email"), (status, body))
status, body, _ = call("POST", "/v1/email/actions/consume", {"email": "a@example.com", "oob_code": "not-a-code"})
check("v1 email consume unknown: 404 not_found", status == 404 and body.get("result") == "not_found", (status, body))
status, body, _ = call("POST", "/v1/push/verifications/none/confirm", {"secret": "x"})
check("v1 push confirm unknown: 404", status == 404 and body.get("result") == "not_found", (status, body))
status, body, _ = call("DELETE", "/v1/accounts/no-such-account")
check("v1 delete unknown account: 404", status == 404, (status, body))
bearer = KEY_ID + "." + KEY_SECRET
request = urllib.request.Request(URL + "/v1/sms/verifications/acc-v1-1", headers={"Authorization": "Bearer " + bearer})
with urllib.request.urlopen(request) as response:
    check("v1 Bearer id.secret", response.status == 200)

# A Twilio message status callback, signed by Twilio's own RequestValidator (the code Twilio's
# libraries check Twilio's requests with), to herald-api's receipt endpoint: 204; the same with
# one parameter changed: 401.
def status_callback(params, signature):
    request = urllib.request.Request(URL + "/v1/receipts/twilio", data=urllib.parse.urlencode(params).encode(), method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    request.add_header("X-Twilio-Signature", signature)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


callback = {"AccountSid": "AC" + "0" * 32, "ApiVersion": "2010-04-01", "From": "+15005550006", "To": "+14155550109",
            "MessageSid": "SM" + "1" * 32, "SmsSid": "SM" + "1" * 32, "MessageStatus": "delivered", "SmsStatus": "delivered"}
signature = RequestValidator(os.environ["HERALD_SMS_TWILIO_AUTH_TOKEN"]).compute_signature(URL + "/v1/receipts/twilio", callback)
status, body = status_callback(callback, signature)
check("receipt signed by Twilio's RequestValidator: 204", status == 204, (status, body))
status, body = status_callback(dict(callback, MessageStatus="undelivered"), signature)
check("receipt with a changed parameter: 401 bad_signature", status == 401 and json.loads(body)["error"]["code"] == "bad_signature", (status, body))

failed = [name for name, ok in checks if not ok]
print(f"{len(checks) - len(failed)} of {len(checks)} checks passed")
sys.exit(1 if failed else 0)
