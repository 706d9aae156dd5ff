"""What the generated-client scenarios share (tests/api/generated_client_*.py, run by
scripts/test-generators.sh): the checks and their summary, the codes where the dev outbox put
them, and the start's answer judged by the contract (docs/openapi.yaml).

    HERALD_API_URL  HERALD_API_KEY (id:secret, scopes sms, email, push)
    HERALD_OUTBOX_DIRECTORY (the dev outbox: sms.jsonl, email.jsonl, push.jsonl)
"""
import json
import os
import re
import sys
import time
import urllib.parse

URL = os.environ["HERALD_API_URL"]
KEY_ID, KEY_SECRET = os.environ["HERALD_API_KEY"].split(":", 1)
OUTBOX = os.environ["HERALD_OUTBOX_DIRECTORY"]
WAIT_SECONDS = 20.0
# A continue URL on `email.authorized_domains` (Config/herald.yaml: localhost).
CONTINUE_URL = "https://localhost/finish"

checks = []


def check(name, condition, detail=""):
    checks.append((name, bool(condition)))
    print(("ok   " if condition else "FAIL ") + name + (f"  ({detail!r})" if detail != "" and not condition else ""), flush=True)
    return bool(condition)


def finish(generator):
    failed = [name for name, ok in checks if not ok]
    print(f"{generator}: {len(checks) - len(failed)} of {len(checks)} checks passed")
    sys.exit(1 if failed or not checks else 0)


def _outbox_entry(file, matches, what):
    """The latest entry of the dev outbox's `file` that `matches`, waiting for it."""
    path = os.path.join(OUTBOX, file)
    deadline = time.time() + WAIT_SECONDS
    while time.time() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                found = [entry for entry in map(json.loads, f) if matches(entry)]
            if found:
                return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"nothing in {path} for {what} within {WAIT_SECONDS:.0f} s")


def sms_code(verification_id):
    """The code herald-sms sent for `verification_id` (the SMS text starts with it)."""
    entry = _outbox_entry("sms.jsonl", lambda e: e.get("verification_id") == verification_id, verification_id)
    return entry["text"].split()[0]


def email_oob_code(address):
    """The `oobCode` of the link in the latest message herald-email sent to `address`."""
    entry = _outbox_entry("email.jsonl", lambda e: e.get("to") == address, address)
    link = re.search(r"https?://\S+", entry["text"]).group(0)
    return urllib.parse.parse_qs(urllib.parse.urlparse(link).query)["oobCode"][0]


def push_secret(receipt):
    """The secret the silent push for `receipt` carried (the stand-in device's payload)."""
    entry = _outbox_entry("push.jsonl", lambda e: e.get("receipt") == receipt, receipt)
    return json.loads(entry["payload"])["herald"]["secret"]


def wrong(code):
    """A code of the same form that is not `code`."""
    return "0" * len(code) if code != "0" * len(code) else "1" * len(code)


def fresh_start_answered(name, status_code, body, id_key, channel):
    """A fresh start's answer with its worker running: 200 `sending` on `channel` (the worker's
    decision, docs/api.md "Starts answer with the decision"). Anything else fails, naming what came."""
    return check(f"{name}: 200 sending on {channel}",
                 status_code == 200 and body.get("status") == "sending" and body.get("channel") == channel and body.get(id_key),
                 (status_code, body))
