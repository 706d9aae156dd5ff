#!/usr/bin/env python3
"""herald-api through the client openapi-python-client generated from docs/openapi.yaml
(scripts/test-generators.sh generates it as the package `herald_opc_client`), with a Bearer key:
an SMS code, an email sign-in link and a push confirmation, each started, then a wrong code,
the right one, and the right one again. Environment: tests/api/generated_client_support.py.
"""
from generated_client_support import (
    CONTINUE_URL, KEY_ID, KEY_SECRET, URL, check, email_oob_code, finish, fresh_start_answered, push_secret, sms_code, wrong,
)
from herald_opc_client import AuthenticatedClient
from herald_opc_client.api.email import consume_email_action, send_email_action
from herald_opc_client.api.push import confirm_push_verification, start_push_verification
from herald_opc_client.api.sms import check_sms_verification, get_sms_verification, start_sms_verification
from herald_opc_client.models import (
    ActionCodeSettings, EmailActionRequest, EmailActionRequestMode, EmailConsumeRequest, PushConfirmRequest,
    PushVerificationRequest, PushVerificationRequestPlatform, SMSCheckRequest, SMSVerificationRequest,
)

client = AuthenticatedClient(base_url=URL, token=f"{KEY_ID}.{KEY_SECRET}", raise_on_unexpected_status=True)


def answer(response):
    """The status and the body as the generated client parsed it."""
    return int(response.status_code), response.parsed.to_dict() if response.parsed is not None else None


def sms_state(verification_id):
    response = get_sms_verification.sync_detailed(verification_id, client=client)
    return answer(response)[1]["state"] if response.status_code == 200 else None


# SMS: start, a wrong code, the right one, the right one again.
status, body = answer(start_sms_verification.sync_detailed(client=client, body=SMSVerificationRequest(phone_number="+14155550131")))
fresh_start_answered("sms start", status, body, "verification_id", "sms")
verification = body["verification_id"]
state = sms_state(verification)
check("sms read: the state the decision recorded", state in ("sending", "sent"), state)
code = sms_code(verification)
status, body = answer(check_sms_verification.sync_detailed(verification, client=client, body=SMSCheckRequest(code=wrong(code))))
check("sms wrong code: wrong_code, 4 tries left", status == 200 and body.get("result") == "wrong_code" and body.get("attempts_left") == 4, body)
status, body = answer(check_sms_verification.sync_detailed(verification, client=client, body=SMSCheckRequest(code=code)))
check("sms right code: verified", status == 200 and body.get("result") == "verified" and body.get("phone_number") == "+14155550131", body)
status, body = answer(check_sms_verification.sync_detailed(verification, client=client, body=SMSCheckRequest(code=code)))
check("sms same code again: already_used", status == 200 and body.get("result") == "already_used", body)

# Email: a sign-in link; a code that is not the link's, the link's, the link's again.
address = "opc.client@example.com"
request = EmailActionRequest(email=address, mode=EmailActionRequestMode.SIGN_IN, action_code_settings=ActionCodeSettings(url=CONTINUE_URL))
status, body = answer(send_email_action.sync_detailed(client=client, body=request))
fresh_start_answered("email start", status, body, "request_id", "email")
oob_code = email_oob_code(address)
status, body = answer(consume_email_action.sync_detailed(client=client, body=EmailConsumeRequest(email=address, oob_code=wrong(oob_code))))
check("email wrong code: 404 not_found", status == 404 and body.get("result") == "not_found", (status, body))
status, body = answer(consume_email_action.sync_detailed(client=client, body=EmailConsumeRequest(email=address, oob_code=oob_code)))
check("email right code: success, the continue URL",
      status == 200 and body.get("result") == "success" and body.get("continue_url") == CONTINUE_URL, body)
status, body = answer(consume_email_action.sync_detailed(client=client, body=EmailConsumeRequest(email=address, oob_code=oob_code)))
check("email same code again: already_used", status == 200 and body.get("result") == "already_used", body)

# Push: a silent push; a wrong secret, the pushed one, the pushed one again.
request = PushVerificationRequest(device_token="a1" * 32, platform=PushVerificationRequestPlatform.APNS, app_id="com.example.opc")
status, body = answer(start_push_verification.sync_detailed(client=client, body=request))
check("push start: 202 queued", status == 202 and body.get("status") == "queued" and body.get("receipt"), (status, body))
receipt = body["receipt"]
secret = push_secret(receipt)
status, body = answer(confirm_push_verification.sync_detailed(receipt, client=client, body=PushConfirmRequest(secret=wrong(secret))))
check("push wrong secret: mismatch", status == 200 and body.get("result") == "mismatch", body)
status, body = answer(confirm_push_verification.sync_detailed(receipt, client=client, body=PushConfirmRequest(secret=secret)))
check("push right secret: verified", status == 200 and body.get("result") == "verified" and body.get("app_id") == "com.example.opc", body)
status, body = answer(confirm_push_verification.sync_detailed(receipt, client=client, body=PushConfirmRequest(secret=secret)))
check("push same secret again: already_used", status == 200 and body.get("result") == "already_used", body)

finish("openapi-python-client")
