#!/usr/bin/env python3
"""Checks docs/schemas/*.v1.json: each is a valid JSON Schema (draft 2020-12), accepts a
valid job body and refuses invalid ones the way the workers do (Jobs.swift, WireRules.swift).
Needs python3-jsonschema. Exits 0 when every check holds, 1 otherwise."""
import copy
import json
import pathlib
import sys

from jsonschema import Draft202012Validator

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "schemas"

VALID = {
    "sms.verification": {
        "version": 1, "verification_id": "v-1", "phone_number": "+4915112345678",
        "purpose": "sign_in", "locale": "pt-BR", "force_resend": False,
        "client": {"ip": "203.0.113.7", "app_id": "com.example.app"}, "extra": "ignored",
    },
    "sms.receipt": {
        "version": 1, "provider": "twilio", "provider_message_id": "SM0123456789abcdef0123456789abcdef", "status": "delivered",
        "provider_status": "delivered", "error_code": None, "occurred_at": None, "received_at": "2026-11-27T19:02:03Z",
    },
    "sms.fallback": {"version": 1, "verification_id": "v-1", "step": 1, "reason": "timeout", "phone_number": "+4915112345678"},
    "email.action": {
        "version": 1, "request_id": "r-1", "email": "alice@example.com", "mode": "sign_in", "locale": "en",
        "action_code_settings": {"url": "https://app.example.com/finish?cart=42", "handle_code_in_app": True},
    },
    "email.code": {
        "version": 1, "verification_id": "v-1", "email": "alice@example.com", "purpose": "sign_in", "locale": "de",
        "force_resend": False, "client": {"ip": "203.0.113.7"}, "extra": "ignored",
    },
    "push.verification": {
        "version": 1, "receipt": "rc-1", "device_token": "ab" * 32, "platform": "apns",
        "environment": "sandbox", "app_id": "com.example.app", "timeout_seconds": 300,
    },
    "cleanup.run": {"version": 1, "run_id": "run-1", "dry_run": True},
    "apple.token": {"version": 1, "account_id": "u-1", "client_id": "com.example.app", "authorization_code": "c0ffee.0.abcd-XYZ_1"},
    "apple.revoke": {"version": 1, "account_id": "u-1", "client_id": "com.example.app"},
    "apple.notification": {"version": 1, "payload": "eyJhbGciOiJSUzI1NiIsImtpZCI6IlcifQ.eyJpc3MiOiJ4In0.c2ln-_0"},
}

# Other bodies the workers accept.
ALSO_VALID = {
    "sms.verification": [{"locale": None, "force_resend": None, "client": None}, {"phone_number": "+1234567"}, {"phone_number": "+123456789012345"},
                         {"app_verification": {"receipt": "rc-1", "app_id": "com.example.app"}},
                         {"app_verification": {"captcha": {"provider": "turnstile", "token": "0.abc-XYZ"}}},
                         {"app_verification": {"captcha": {"provider": "hcaptcha", "token": "t"}, "receipt": None}},
                         {"app_verification": None}, {"channel": "whatsapp"}, {"channel": None}, {"channel": "voice"},
                         {"channels": ["whatsapp", "sms", "voice"]}, {"channels": ["sms"], "channel": None}, {"channels": None}],
    "sms.receipt": [{"provider": "kannel", "provider_message_id": "hk-0a1b", "status": "sent", "provider_status": "8"},
                    {"provider": "webhook", "status": "undelivered", "error_code": "carrier 31", "occurred_at": "2026-11-27T19:02:03.123+01:00"},
                    {"status": "queued", "provider_status": None, "received_at": "2026-11-27T19:02:03.5Z"},
                    {"provider": "whatsapp", "provider_message_id": "wamid.HBgLMTY0NjcwNDM1OTUVAgARGBI1RjQy"},
                    {"provider": "twilio_voice", "provider_message_id": "CA0123456789abcdef0123456789abcdef", "status": "delivered",
                     "provider_status": "in-progress"}],
    "sms.fallback": [{"step": 2, "reason": "undelivered"}, {"extra": "ignored"}],
    "email.action": [
        {"mode": "verify_email", "action_code_settings": {"url": "HTTP://x.example/"}},
        {"mode": "reset_password", "action_code_settings": {"url": "https://x.example/", "handle_code_in_app": False}},
        {"email": "a.b+c@mail.example.co"},
        {"mode": "verify_and_change_email", "old_email": "old@example.com"},
        {"mode": "recover_email", "old_email": None},
    ],
    "email.code": [{"purpose": "mfa_sign_in", "code_length": 4, "code_ttl_seconds": 60}, {"purpose": "verify_email", "code_length": 10, "code_ttl_seconds": 86400},
                   {"locale": None, "force_resend": None, "client": None, "code_length": None, "code_ttl_seconds": None}],
    "push.verification": [{"platform": "fcm", "device_token": "fcm:token-xyz_123"}, {"timeout_seconds": None}],
    "cleanup.run": [{"dry_run": None}],
    "apple.token": [{"authorization_code": "x" * 1024}],
    "apple.revoke": [{"authorization_code": "c0ffee.0.abcd"}, {"authorization_code": None}],
    "apple.notification": [{"payload": "a.b.c"}, {"payload": "a." + "b" * 16000 + ".c"}],
}

MISSING = object()
# (changes to the valid body) -> must be refused.
INVALID = {
    "sms.verification": [
        {"verification_id": MISSING}, {"version": MISSING}, {"version": 2}, {"version": "1"},
        {"verification_id": 5}, {"verification_id": ""}, {"verification_id": "has space"}, {"verification_id": "x" * 129},
        {"phone_number": "015112345678"}, {"phone_number": "+0151123456"}, {"phone_number": "+123456"},
        {"phone_number": "+1234567890123456"}, {"phone_number": "+49 151 1234567"},
        {"purpose": "lunch"}, {"purpose": MISSING}, {"purpose": None}, {"locale": "e"}, {"locale": "en US"},
        {"force_resend": "yes"}, {"client": "web"}, {"client": {"ip": 7}},
        {"app_verification": {}}, {"app_verification": {"receipt": "rc-1"}}, {"app_verification": {"receipt": "a b", "app_id": "x"}},
        {"app_verification": {"receipt": "rc-1", "app_id": "x", "captcha": {"provider": "hcaptcha", "token": "t"}}},
        {"app_verification": {"captcha": {"provider": "friendly", "token": "t"}}},
        {"app_verification": {"captcha": {"provider": "recaptcha", "token": ""}}},
        {"app_verification": {"captcha": {"provider": "recaptcha", "token": "t" * 4097}}},
        {"app_verification": {"captcha": {"provider": "recaptcha"}}},
        {"channel": "WhatsApp"}, {"channels": []}, {"channels": ["sms", "sms"]}, {"channels": ["fax"]},
        {"channels": ["sms", "whatsapp", "voice", "sms"]}, {"channels": "sms"}, {"channel": "sms", "channels": ["sms", "voice"]},
    ],
    "sms.receipt": [
        {"provider": "sns"}, {"provider": MISSING}, {"provider_message_id": ""}, {"provider_message_id": "a b"},
        {"provider_message_id": "x" * 129}, {"status": "read"}, {"status": MISSING}, {"provider_status": ""},
        {"error_code": "x" * 65}, {"error_code": "\u00e9"}, {"received_at": MISSING}, {"received_at": "yesterday"},
        {"occurred_at": "2026-11-27"}, {"version": 2},
    ],
    "sms.fallback": [{"step": 0}, {"step": 3}, {"step": "1"}, {"reason": "later"}, {"reason": MISSING}, {"verification_id": "a b"},
                     {"phone_number": MISSING}, {"phone_number": "015112345678"}, {"version": 2}],
    "email.action": [
        {"email": "a@b"}, {"email": "ab.example.com"}, {"email": "a@@example.com"}, {"email": "a b@example.com"},
        {"email": "@example.com"}, {"email": "a@.example.com"}, {"email": "a@example.com."}, {"email": "<a@example.com>"},
        {"email": "x" * 65 + "@example.com"}, {"mode": "login"}, {"action_code_settings": MISSING},
        {"action_code_settings": None}, {"action_code_settings": {"handle_code_in_app": True}},
        {"action_code_settings": {"url": "ftp://x.example/", "handle_code_in_app": True}},
        {"action_code_settings": {"url": "https://x.example/", "handle_code_in_app": False}},
        {"action_code_settings": {"url": "https://x.example/"}},
        {"action_code_settings": {"url": "https://x.example/" + "a" * 2048, "handle_code_in_app": True}},
        {"request_id": MISSING},
        {"mode": "verify_and_change_email"}, {"mode": "verify_and_change_email", "old_email": None},
        {"mode": "verify_and_change_email", "old_email": "a@b"}, {"old_email": "old@example.com"},
        {"mode": "recover_email", "old_email": "old@example.com"},
    ],
    "email.code": [
        {"verification_id": MISSING}, {"verification_id": ""}, {"verification_id": "a b"}, {"email": MISSING}, {"email": "a@b"},
        {"email": "ab.example.com"}, {"purpose": MISSING}, {"purpose": "reset_password"}, {"code_length": 3}, {"code_length": 11},
        {"code_length": "6"}, {"code_ttl_seconds": 59}, {"code_ttl_seconds": 86401}, {"force_resend": "yes"}, {"locale": "e"},
        {"client": "web"}, {"version": 2},
    ],
    "push.verification": [
        {"device_token": "zz"}, {"device_token": "abc"}, {"device_token": ""}, {"device_token": "ab cd"},
        {"platform": "fcm", "device_token": "a" * 4097}, {"platform": "hms"}, {"environment": "staging"},
        {"app_id": MISSING}, {"receipt": "a b"}, {"timeout_seconds": 0}, {"timeout_seconds": 86401},
        {"timeout_seconds": "60"},
    ],
    "cleanup.run": [{"run_id": MISSING}, {"run_id": ""}, {"dry_run": "no"}, {"version": 0}],
    "apple.token": [{"authorization_code": MISSING}, {"authorization_code": None}, {"authorization_code": ""},
                    {"authorization_code": "a b"}, {"authorization_code": "x" * 1025}, {"account_id": MISSING},
                    {"account_id": "a b"}, {"client_id": ""}, {"client_id": MISSING}, {"version": 2}],
    "apple.revoke": [{"account_id": MISSING}, {"client_id": "x" * 129}, {"authorization_code": ""},
                     {"authorization_code": "a b"}, {"version": MISSING}],
    "apple.notification": [{"payload": MISSING}, {"payload": None}, {"payload": ""}, {"payload": "a.b"}, {"payload": "a.b."},
                           {"payload": "a.b.c.d"}, {"payload": "a.b+c.d"}, {"payload": "a.b.c "}, {"payload": "a." + "b" * 16381 + ".c"},
                           {"version": 2}],
}


def patched(base, changes):
    body = copy.deepcopy(base)
    for key, value in changes.items():
        if value is MISSING:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def main():
    passed, failures = 0, []
    for name, base in VALID.items():
        path = SCHEMAS / f"{name}.v1.json"
        try:
            schema = json.loads(path.read_text())
            Draft202012Validator.check_schema(schema)
        except Exception as error:  # unreadable, not JSON, or not a valid schema
            failures.append(f"{path.name}: {error}")
            continue
        validator = Draft202012Validator(schema)
        for changes in [{}] + ALSO_VALID[name]:
            errors = list(validator.iter_errors(patched(base, changes)))
            if errors:
                failures.append(f"{name}: valid body {changes} refused: {errors[0].message}")
            else:
                passed += 1
        for changes in INVALID[name]:
            if validator.is_valid(patched(base, changes)):
                shown = {k: ("<missing>" if v is MISSING else v) for k, v in changes.items()}
                failures.append(f"{name}: invalid body {shown} accepted")
            else:
                passed += 1
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"check-schemas: {passed} checks passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
