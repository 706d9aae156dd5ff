import Foundation
import HeraldAPIStore
import HeraldRuntime
import HTTPTypes
import Hummingbird

/// Twilio Verify v2's resources as JSON, with Twilio's field names. `base` is the URL the API is
/// reached at (`api.public_url`, else the request's own scheme and host).
struct VerifyResources {
    let base: String
    /// `AC` and the key's 32 hex digits: the account a Twilio client believes it is.
    let accountSid: String

    init(request: Request, publicURL: String, key: APIKey, tls: Bool) {
        if !publicURL.isEmpty {
            base = publicURL
        } else {
            let host = request.head.authority ?? "localhost"
            base = (tls ? "https://" : "http://") + host
        }
        accountSid = "AC" + key.id.dropFirst(2)
    }

    func service(_ s: VerifyService) -> [String: Any] {
        let url = "\(base)/v2/Services/\(s.sid)"
        return [
            "sid": s.sid, "account_sid": accountSid, "friendly_name": s.friendlyName, "code_length": s.codeLength,
            "lookup_enabled": false, "psd2_enabled": false, "skip_sms_to_landlines": s.skipSMSToLandlines, "dtmf_input_required": false,
            "tts_name": NSNull(), "do_not_share_warning_enabled": s.doNotShareWarning, "custom_code_enabled": false,
            "push": ["include_date": false, "apn_credential_sid": NSNull(), "fcm_credential_sid": NSNull()],
            "totp": ["issuer": NSNull(), "time_step": 30, "code_length": 6, "skew": 1],
            "whatsapp": ["msg_service_sid": NSNull(), "from": NSNull()],
            "default_template_sid": NSNull(), "verify_event_subscription_enabled": false,
            // Herald's own settings of the Service (Twilio sets these per account).
            "ttl_seconds": s.ttlSeconds, "max_send_attempts": s.maxSendAttempts, "max_check_attempts": s.maxCheckAttempts,
            "date_created": JSONResponse.timestamp(s.createdAt), "date_updated": JSONResponse.timestamp(s.updatedAt),
            "url": url,
            "links": ["verifications": "\(url)/Verifications", "verification_checks": "\(url)/VerificationCheck"],
        ]
    }

    func verification(_ v: VerifyVerification) -> [String: Any] {
        [
            "sid": v.sid, "service_sid": v.serviceSid, "account_sid": accountSid, "to": v.to, "channel": v.channel,
            "status": v.status.rawValue, "valid": v.status == .approved, "lookup": [String: Any](), "amount": NSNull(), "payee": NSNull(),
            "send_code_attempts": v.sendAttempts.map { ["attempt_sid": $0.sid, "channel": $0.channel, "time": JSONResponse.timestamp($0.time)] },
            "date_created": JSONResponse.timestamp(v.createdAt), "date_updated": JSONResponse.timestamp(v.updatedAt),
            "sna": NSNull(), "url": "\(base)/v2/Services/\(v.serviceSid)/Verifications/\(v.sid)",
        ]
    }

    func check(_ v: VerifyVerification, status: VerifyVerification.Status) -> [String: Any] {
        [
            "sid": v.sid, "service_sid": v.serviceSid, "account_sid": accountSid, "to": v.to, "channel": v.channel,
            "status": status.rawValue, "valid": status == .approved, "amount": NSNull(), "payee": NSNull(),
            "date_created": JSONResponse.timestamp(v.createdAt), "date_updated": JSONResponse.timestamp(v.updatedAt),
            "sna_attempts_error_codes": [Any](),
        ]
    }
}
