import Crypto
import Foundation
import HeraldRuntime
import HeraldWire

/// Twilio's message status callback: a form POST to the message's `StatusCallback` with
/// `MessageSid`, `MessageStatus` and, when it failed, `ErrorCode`, signed in `X-Twilio-Signature`:
/// the base64 HMAC-SHA1, under the account's auth token, of the exact URL Twilio requested
/// followed by each POST parameter's name and value, sorted by name. Pure: the unit tests run it
/// (ReceiptUnitTests).
enum TwilioStatusCallback {
    /// The form body as Twilio sent it: name and value pairs, in order, decoded (every one is
    /// signed, so none is dropped or merged as ``FormFields`` would).
    static func pairs(_ body: String) throws -> [(String, String)] { try FormFields.pairs(body) }

    /// `X-Twilio-Signature` of a POST to `url` with `pairs`.
    static func signature(url: String, pairs: [(String, String)], authToken: String) -> String {
        Data(HMAC<Insecure.SHA1>.authenticationCode(for: signed(url: url, pairs: pairs), using: SymmetricKey(data: Array(authToken.utf8))))
            .base64EncodedString()
    }

    /// True when `header` is the signature of this request (compared in constant time), over
    /// `url` as given or with its scheme's default port written out or left out: Twilio signs
    /// either form, and its own validators try both.
    static func holds(_ header: String?, url: String, pairs: [(String, String)], authToken: String) -> Bool {
        guard let header, let given = Data(base64Encoded: header), !authToken.isEmpty else { return false }
        let key = SymmetricKey(data: Array(authToken.utf8))
        return urlForms(url).contains { HMAC<Insecure.SHA1>.isValidAuthenticationCode(given, authenticating: signed(url: $0, pairs: pairs), using: key) }
    }

    /// `url`, and the same with the default port (443, 80) added when it has none, or removed
    /// when it has it.
    static func urlForms(_ url: String) -> [String] {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else { return [url] }
        let standard = scheme == "https" ? 443 : scheme == "http" ? 80 : nil
        guard let standard else { return [url] }
        if parts.port == nil {
            parts.port = standard
        } else if parts.port == standard {
            parts.port = nil
        } else {
            return [url]
        }
        return [url] + (parts.string.map { [$0] } ?? [])
    }

    /// The URL, then every parameter name (sorted) followed by its values, each once, sorted, as
    /// Twilio's own validators build it.
    private static func signed(url: String, pairs: [(String, String)]) -> [UInt8] {
        let byName = Dictionary(grouping: pairs, by: \.0)
        let text = byName.keys.sorted().map { name in Set(byName[name]!.map(\.1)).sorted().map { name + $0 }.joined() }.joined()
        return Array((url + text).utf8)
    }

    /// Twilio's message statuses as Herald keeps them: accepted, scheduled, queued and sending
    /// are `queued`; sent `sent`; delivered and read `delivered`; undelivered, failed and canceled
    /// `undelivered`.
    static func status(_ twilio: String) -> DeliveryStatus? {
        switch twilio {
        case "accepted", "scheduled", "queued", "sending": .queued
        case "sent": .sent
        case "delivered", "read": .delivered
        case "undelivered", "failed", "canceled": .undelivered
        default: nil
        }
    }

    /// The receipt a signed callback carries, or nil for a status Herald does not keep (an
    /// incoming message's `received`, RCS's `partially_delivered`, …): taken and ignored.
    static func receipt(_ pairs: [(String, String)], receivedAt: Date = Date()) throws -> SMSReceiptJob? {
        let fields = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        if fields["CallSid"] != nil { return try callReceipt(fields, receivedAt: receivedAt) }
        guard let sid = fields["MessageSid"] ?? fields["SmsSid"], !sid.isEmpty else {
            throw APIFailure.invalid(field: "MessageSid", reason: "required")
        }
        guard let twilio = fields["MessageStatus"] ?? fields["SmsStatus"], !twilio.isEmpty else {
            throw APIFailure.invalid(field: "MessageStatus", reason: "required")
        }
        guard let status = status(twilio) else { return nil }
        let code = fields["ErrorCode"].flatMap { $0.isEmpty ? nil : $0 }
        if let code, !(code.count <= 8 && code.allSatisfy(\.isNumber)) {
            throw APIFailure.invalid(field: "ErrorCode", reason: "not a Twilio error code")
        }
        let job = SMSReceiptJob(provider: .twilio, providerMessageID: sid, status: status, providerStatus: APIFailure.printableName(twilio),
                                errorCode: code.map { "twilio-\($0)" }, receivedAt: receivedAt)
        return try JSONFields.validated(job)
    }

    /// Twilio's call statuses as Herald keeps them: queued and initiated are `queued`; ringing
    /// `sent`; in-progress (answered: the code is being read) and completed `delivered`; busy,
    /// no-answer, failed and canceled `undelivered`.
    static func callStatus(_ twilio: String) -> DeliveryStatus? {
        switch twilio {
        case "queued", "initiated": .queued
        case "ringing": .sent
        case "in-progress", "completed": .delivered
        case "busy", "no-answer", "failed", "canceled": .undelivered
        default: nil
        }
    }

    /// A call's status callback (the voice channel): `CallSid`, `CallStatus`, `Timestamp` (RFC 2822),
    /// `SipResponseCode` on a failed call.
    static func callReceipt(_ fields: [String: String], receivedAt: Date) throws -> SMSReceiptJob? {
        guard let sid = fields["CallSid"], !sid.isEmpty else { throw APIFailure.invalid(field: "CallSid", reason: "required") }
        guard let twilio = fields["CallStatus"], !twilio.isEmpty else { throw APIFailure.invalid(field: "CallStatus", reason: "required") }
        guard let status = callStatus(twilio) else { return nil }
        let sip = fields["SipResponseCode"].flatMap { $0.isEmpty ? nil : $0 }
        if let sip, !(sip.count == 3 && sip.allSatisfy(\.isNumber)) {
            throw APIFailure.invalid(field: "SipResponseCode", reason: "not a SIP status code")
        }
        let code = status == .undelivered ? "twilio-call-\(APIFailure.printableName(twilio))" + (sip.map { "-sip-\($0)" } ?? "") : nil
        let job = SMSReceiptJob(provider: .twilioVoice, providerMessageID: sid, status: status, providerStatus: APIFailure.printableName(twilio),
                                errorCode: code, receivedAt: receivedAt)
        return try JSONFields.validated(job)
    }
}
