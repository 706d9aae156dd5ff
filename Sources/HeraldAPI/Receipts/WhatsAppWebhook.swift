import Crypto
import Foundation
import HeraldRuntime
import HeraldWire

/// WhatsApp Business Cloud API's webhooks, as Meta sends them to the callback URL of the app:
/// a subscription handshake (`GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`,
/// answered with the challenge), then `POST`s signed in `X-Hub-Signature-256: sha256=<hex>`
/// (HMAC-SHA256 of the raw body under the app secret) whose `entry[].changes[].value.statuses[]`
/// report each message (`id` the `wamid`, `status` sent, delivered, read or failed, `timestamp`
/// Unix seconds, `errors[].code`). Pure: the unit tests run it (ReceiptUnitTests).
enum WhatsAppWebhook {
    /// True when `header` is `sha256=` and the body's HMAC under `appSecret` (constant time).
    static func holds(_ header: String?, body: [UInt8], appSecret: String) -> Bool {
        guard let header, header.hasPrefix("sha256="), !appSecret.isEmpty, let given = hex(header.dropFirst(7)) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: body, using: SymmetricKey(data: Array(appSecret.utf8)))
    }

    /// `sha256=` and the HMAC of `body`, as Meta signs (the unit tests sign with it; the stand-in
    /// has its own, so that the two are checked against each other).
    static func signature(body: [UInt8], appSecret: String) -> String {
        "sha256=" + HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(appSecret.utf8))).map { String(format: "%02x", $0) }.joined()
    }

    private static func hex(_ text: Substring) -> [UInt8]? {
        guard text.count == 64, text.allSatisfy(\.isHexDigit) else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// WhatsApp's statuses as Herald keeps them: sent; delivered and read → delivered; failed →
    /// undelivered (with `whatsapp-<code>`); any other (deleted, warning) is ignored.
    static func status(_ whatsapp: String) -> DeliveryStatus? {
        switch whatsapp {
        case "sent": .sent
        case "delivered", "read": .delivered
        case "failed": .undelivered
        default: nil
        }
    }

    /// The receipts of one signed notification: one per status Herald keeps of the business
    /// number `phoneNumberID` (the app's webhook carries every number's, and incoming messages:
    /// skipped), a status without an id skipped too (the others of the batch still count), and
    /// a status of a message Herald did not send (its `biz_opaque_callback_data` is not Herald's:
    /// another sender on the same number, or a send of a Herald before issue 46) dropped here,
    /// never retried as a receipt whose send is not recorded yet. A body that is not Meta's shape
    /// is refused naming what.
    static func receipts(_ body: [UInt8], phoneNumberID: String, receivedAt: Date = Date()) throws -> [SMSReceiptJob] {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw APIFailure.invalid(field: nil, reason: "the body is not a JSON object")
        }
        guard root["object"] as? String == "whatsapp_business_account", let entries = root["entry"] as? [[String: Any]] else {
            throw APIFailure.invalid(field: "object", reason: "object must be whatsapp_business_account, with entry")
        }
        var out: [SMSReceiptJob] = []
        for entry in entries {
            for change in entry["changes"] as? [[String: Any]] ?? [] {
                let value = change["value"] as? [String: Any] ?? [:]
                guard (value["metadata"] as? [String: Any])?["phone_number_id"] as? String == phoneNumberID else { continue }
                for item in value["statuses"] as? [[String: Any]] ?? [] {
                    guard let id = item["id"] as? String, (1...128).contains(id.utf8.count), let word = item["status"] as? String,
                          let status = status(word), WhatsAppCallbackData.sentByHerald(item["biz_opaque_callback_data"] as? String) else { continue }
                    let code = ((item["errors"] as? [[String: Any]])?.first?["code"] as? Int).map { "whatsapp-\($0)" }
                    let occurred = (item["timestamp"] as? String).flatMap(Int.init).map { Date(timeIntervalSince1970: TimeInterval($0)) }
                    guard let job = try? JSONFields.validated(SMSReceiptJob(
                        provider: .whatsapp, providerMessageID: id, status: status, providerStatus: APIFailure.printableName(word),
                        errorCode: status == .undelivered ? code ?? "whatsapp-failed" : nil, occurredAt: occurred, receivedAt: receivedAt))
                    else { continue }
                    out.append(job)
                }
            }
        }
        return out
    }
}
