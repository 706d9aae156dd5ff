#!/usr/bin/env python3
"""herald-api through the client OpenAPI Tools' openapi-generator (`python`) generated from
docs/openapi.yaml (scripts/test-generators.sh generates it as the package `herald_ogen_client`),
with HTTP Basic: an SMS code, an email sign-in link and a push confirmation, each started, then a
wrong code, the right one, and the right one again. Environment: tests/api/generated_client_support.py.
"""
from generated_client_support import (
    CONTINUE_URL, KEY_ID, KEY_SECRET, URL, check, email_oob_code, finish, fresh_start_answered, push_secret, sms_code, wrong,
)
from herald_ogen_client import ApiClient, Configuration
from herald_ogen_client.api import EmailApi, PushApi, SmsApi
from herald_ogen_client.exceptions import ApiException, NotFoundException
from herald_ogen_client.models import (
    ActionCodeSettings, EmailActionRequest, EmailConsumeRequest, PushConfirmRequest, PushVerificationRequest, SMSCheckRequest,
    SMSVerificationRequest,
)

api_client = ApiClient(Configuration(host=URL, username=KEY_ID, password=KEY_SECRET))
sms, email, push = SmsApi(api_client), EmailApi(api_client), PushApi(api_client)


def answer(call):
    """The status and the body as the generated client deserialized it (an error status is
    raised as ApiException, its body deserialized in `data`)."""
    try:
        response = call()
        return int(response.status_code), response.data.to_dict()
    except ApiException as error:
        return error.status, error.data.to_dict() if error.data is not None else {"undeserialized": error.body}


def sms_state(verification_id):
    try:
        return sms.get_sms_verification(verification_id).state
    except NotFoundException:
        return None


# SMS: start, a wrong code, the right one, the right one again.
status, body = answer(lambda: sms.start_sms_verification_with_http_info(SMSVerificationRequest(phone_number="+14155550132")))
fresh_start_answered("sms start", status, body, "verification_id", "sms")
verification = body["verification_id"]
state = sms_state(verification)
check("sms read: the state the decision recorded", state in ("sending", "sent"), state)
code = sms_code(verification)
status, body = answer(lambda: sms.check_sms_verification_with_http_info(verification, SMSCheckRequest(code=wrong(code))))
check("sms wrong code: wrong_code, 4 tries left", status == 200 and body.get("result") == "wrong_code" and body.get("attempts_left") == 4, body)
status, body = answer(lambda: sms.check_sms_verification_with_http_info(verification, SMSCheckRequest(code=code)))
check("sms right code: verified", status == 200 and body.get("result") == "verified" and body.get("phone_number") == "+14155550132", body)
status, body = answer(lambda: sms.check_sms_verification_with_http_info(verification, SMSCheckRequest(code=code)))
check("sms same code again: already_used", status == 200 and body.get("result") == "already_used", body)

# Email: a sign-in link; a code that is not the link's, the link's, the link's again.
address = "ogen.client@example.com"
request = EmailActionRequest(email=address, mode="sign_in", action_code_settings=ActionCodeSettings(url=CONTINUE_URL))
status, body = answer(lambda: email.send_email_action_with_http_info(request))
fresh_start_answered("email start", status, body, "request_id", "email")
oob_code = email_oob_code(address)
status, body = answer(lambda: email.consume_email_action_with_http_info(EmailConsumeRequest(email=address, oob_code=wrong(oob_code))))
check("email wrong code: 404 not_found", status == 404 and body.get("result") == "not_found", (status, body))
status, body = answer(lambda: email.consume_email_action_with_http_info(EmailConsumeRequest(email=address, oob_code=oob_code)))
check("email right code: success, the continue URL",
      status == 200 and body.get("result") == "success" and body.get("continue_url") == CONTINUE_URL, body)
status, body = answer(lambda: email.consume_email_action_with_http_info(EmailConsumeRequest(email=address, oob_code=oob_code)))
check("email same code again: already_used", status == 200 and body.get("result") == "already_used", body)

# Push: a silent push; a wrong secret, the pushed one, the pushed one again.
request = PushVerificationRequest(device_token="b2" * 32, platform="apns", app_id="com.example.ogen")
status, body = answer(lambda: push.start_push_verification_with_http_info(request))
check("push start: 202 queued", status == 202 and body.get("status") == "queued" and body.get("receipt"), (status, body))
receipt = body["receipt"]
secret = push_secret(receipt)
status, body = answer(lambda: push.confirm_push_verification_with_http_info(receipt, PushConfirmRequest(secret=wrong(secret))))
check("push wrong secret: mismatch", status == 200 and body.get("result") == "mismatch", body)
status, body = answer(lambda: push.confirm_push_verification_with_http_info(receipt, PushConfirmRequest(secret=secret)))
check("push right secret: verified", status == 200 and body.get("result") == "verified" and body.get("app_id") == "com.example.ogen", body)
status, body = answer(lambda: push.confirm_push_verification_with_http_info(receipt, PushConfirmRequest(secret=secret)))
check("push same secret again: already_used", status == 200 and body.get("result") == "already_used", body)

finish("openapi-generator")
