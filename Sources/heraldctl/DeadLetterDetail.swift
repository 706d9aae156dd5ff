import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

/// One dead letter in full, for `dlq show`: properties, headers and body. Unless `raw`, the
/// body's personal data and the credentials some jobs carry (captcha tokens, Apple
/// authorization codes, the claims of Apple's notifications) are masked.
struct DeadLetterDetail: Sendable {
    var delivery: AMQPDelivery
    var letter: DeadLetter
    var raw: Bool

    var properties: [String: Any] {
        let p = delivery.properties
        return [
            "message_id": p.messageID ?? "", "type": p.type ?? "", "correlation_id": p.correlationID ?? "",
            "content_type": p.contentType ?? "", "timestamp": p.timestamp.map { $0.iso8601 } ?? "",
        ]
    }

    var headers: [String: Any] { delivery.properties.headers.mapValues(\.jsonValue) }

    var bodyIsJSON: Bool { json(delivery.body) != nil }

    /// The body as JSON (masked unless `raw`), or, when it is not JSON (often why it is here),
    /// its printable ASCII as is and the rest escaped, with whatever looks like a phone number
    /// or an address masked (unless `raw`) as the log handler masks free text.
    var body: Any {
        if let object = json(delivery.body) { return raw ? object : Self.masked(object) }
        let shown = delivery.body.prefix(1024).map { $0 >= 0x20 && $0 < 0x7F ? String(UnicodeScalar($0)) : String(format: "\\x%02x", $0) }.joined()
        return (raw ? shown : Redact.scrub(shown)) + (delivery.body.count > 1024 ? "… (\(delivery.body.count) bytes)" : "")
    }

    private func json(_ bytes: [UInt8]) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    }

    var json: [String: Any] {
        ["letter": letter.json, "properties": properties, "headers": headers, "body": body, "body_is_json": bodyIsJSON]
    }

    var text: String {
        var lines = [letter.line(now: Date()), "", "properties:"]
        lines += properties.keys.sorted().map { "  \($0): \(properties[$0]!)" }
        lines.append("headers:")
        lines += headers.keys.sorted().map { "  \($0): \(Self.describe(headers[$0]!))" }
        lines.append(bodyIsJSON ? "body (JSON):" : "body (not JSON):")
        if bodyIsJSON, let data = try? JSONSerialization.data(withJSONObject: body, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]) {
            lines.append(String(decoding: data, as: UTF8.self))
        } else {
            lines.append("\(body)")
        }
        return lines.joined(separator: "\n")
    }

    /// Fields that hold personal data in Herald's jobs, masked; nil for other fields.
    static func mask(_ key: String, _ text: String) -> String? {
        switch key {
        case "phone_number": Redact.phone(text)
        case "email", "new_email": Redact.email(text)
        case "device_token": text.count > 8 ? String(text.prefix(8)) + "…" : "***"
        // Bearer credentials: a captcha token (`sms.verification`'s app_verification), an
        // Apple authorization code (`apple.token`, `apple.revoke`; single use, five minutes).
        case "token", "authorization_code": "***"
        // An Apple server-to-server notification (`apple.notification`): a signed JWT whose
        // claims carry the user's relay address. Its header is kept (alg, kid: why a
        // signature check failed); claims and signature are not shown.
        case "payload": text.split(separator: ".", omittingEmptySubsequences: false).count == 3
            ? String(text.prefix { $0 != "." }) + ".***.***" : "***"
        default: nil
        }
    }

    static func masked(_ value: Any) -> Any {
        switch value {
        case let object as [String: Any]:
            return Dictionary(uniqueKeysWithValues: object.map { key, value in
                if let text = value as? String, let masked = mask(key, text) { return (key, masked as Any) }
                return (key, masked(value))
            })
        case let array as [Any]: return array.map(masked)
        case let text as String: return Redact.scrub(text)
        default: return value
        }
    }

    static func describe(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value), let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else { return "\(value)" }
        return String(decoding: data, as: UTF8.self)
    }
}
