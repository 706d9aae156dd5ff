import Crypto
import Foundation
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
import HeraldStubs
import Testing

/// Receipts only the provider can write (issue 46), for each of the four providers on the real
/// herald-api: a signed receipt is taken, and the same one sent again (a replay) is the same job
/// (its message id: the ledger runs it once);
/// the same receipt with its status rewritten (the signature kept) and one signed with another
/// key (a forgery) are refused (401) and publish nothing. A rewritten status is what an attacker
/// holding one captured callback would post: `undelivered` buys a paid fallback, `delivered`
/// stops one.
@Suite(.needsServers) struct ReceiptForgeryTests {
    typealias Auth = APIProcess.Auth

    /// One provider's four posts: the signed one, its replay, its rewrite, a forgery.
    struct Posts {
        var signed: APIProcess.Answer
        var replayed: APIProcess.Answer
        var rewritten: APIProcess.Answer
        var forged: APIProcess.Answer
    }

    static func expect(_ posts: Posts, _ provider: String, taken: Int = 204) {
        #expect(posts.signed.status == taken && posts.replayed.status == taken, "\(provider): \(posts.signed), \(posts.replayed)")
        #expect(posts.rewritten.status == 401 && posts.forged.status == 401, "\(provider): \(posts.rewritten), \(posts.forged)")
    }

    @Test func onlyTheProviderCanWriteAReceipt() async throws {
        try await withHarness { harness in
            let appSecret = "wa-forgery-app-secret"
            let api = try await SMSReceiptTests.api(harness, extra: [
                "HERALD_SMS_WHATSAPP_APP_SECRET": appSecret, "HERALD_SMS_WHATSAPP_PHONE_NUMBER_ID": "109876543210",
                "HERALD_SMS_WHATSAPP_BASE_URL": "http://127.0.0.1:9/v21.0", "HERALD_SMS_WHATSAPP_ACCESS_TOKEN": "t", "HERALD_SMS_WHATSAPP_TEMPLATE": "herald_code",
                "HERALD_SMS_ALLOW_INSECURE_TRANSPORT": "true",
            ])
            let queue = harness.topology.workQueue(.sms)

            // Twilio: X-Twilio-Signature over the URL and the sorted parameters.
            let url = "http://127.0.0.1:\(api.port)/v1/receipts/twilio"
            let fields = [("MessageSid", "SM\(harness.namespace)"), ("MessageStatus", "delivered"), ("AccountSid", "AC1")]
            let form = fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            let signature = TwilioStubServer.signature(url: url, fields: fields, authToken: SMSReceiptTests.twilioToken)
            func twilio(_ body: String, _ signature: String) async throws -> APIProcess.Answer {
                try await api.call(.POST, "/v1/receipts/twilio", body: body, contentType: "application/x-www-form-urlencoded", auth: Auth.none,
                                   headers: [("X-Twilio-Signature", signature)])
            }
            Self.expect(Posts(signed: try await twilio(form, signature), replayed: try await twilio(form, signature),
                              rewritten: try await twilio(form.replacingOccurrences(of: "delivered", with: "undelivered"), signature),
                              forged: try await twilio(form, TwilioStubServer.signature(url: url, fields: fields, authToken: "a-guess"))), "twilio")
            #expect(try await harness.depth(queue) == 2)

            // Kannel: sig over the id and exp; the type Kannel fills in is outside it, so a
            // rewritten type is refused by its source: only this host (no kannel_allowed_sources
            // listed) may report, and the rewrite comes from another (behind a trusted proxy).
            let exp = Int(Date().timeIntervalSince1970) + 3600
            let sig = SMSConfiguration.Receipts.kannelSignature(id: "hk-\(harness.namespace)", expires: exp, secret: SMSReceiptTests.kannelSecret)
            let dlr = "/v1/receipts/kannel?id=hk-\(harness.namespace)&exp=\(exp)&sig=\(sig)"
            let guess = SMSConfiguration.Receipts.kannelSignature(id: "hk-\(harness.namespace)", expires: exp, secret: String(repeating: "g", count: 32))
            let proxied = try await SMSReceiptTests.api(harness, extra: ["HERALD_API_TRUSTED_PROXIES": "127.0.0.1"])
            Self.expect(Posts(signed: try await api.call(.GET, dlr + "&type=1", auth: Auth.none),
                              replayed: try await api.call(.GET, dlr + "&type=1", auth: Auth.none),
                              rewritten: try await proxied.call(.GET, dlr + "&type=16", auth: Auth.none, headers: [("X-Forwarded-For", "203.0.113.50")]),
                              forged: try await api.call(.GET, "/v1/receipts/kannel?id=hk-\(harness.namespace)&exp=\(exp)&sig=\(guess)&type=16", auth: Auth.none)),
                        "kannel")
            #expect(try await harness.depth(queue) == 4)

            // The webhook provider: Standard Webhooks over the id, the timestamp and the body.
            let id = "msg_\(harness.namespace)"
            let timestamp = Int(Date().timeIntervalSince1970)
            let body = Array(#"{"type":"sms.status","data":{"message_id":"m-\#(harness.namespace)","status":"delivered"}}"#.utf8)
            let key = try #require(StandardWebhooks.key(secret: SMSProviderTests.webhookSecret))
            let other = try #require(StandardWebhooks.key(secret: "whsec_" + Data(repeating: 7, count: 32).base64EncodedString()))
            func webhook(_ body: [UInt8], _ key: [UInt8]) async throws -> APIProcess.Answer {
                try await api.call(.POST, "/v1/receipts/webhook", body: String(decoding: body, as: UTF8.self), auth: Auth.none, headers: [
                    ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
                    ("webhook-signature", StandardWebhooks.signature(id: id, timestamp: timestamp, body: body, key: key)),
                ])
            }
            let rewrittenBody = Array(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "delivered", with: "undelivered").utf8)
            let signedWebhook = StandardWebhooks.signature(id: id, timestamp: timestamp, body: body, key: key)
            let rewrittenWebhook = try await api.call(.POST, "/v1/receipts/webhook", body: String(decoding: rewrittenBody, as: UTF8.self), auth: Auth.none,
                                                      headers: [("webhook-id", id), ("webhook-timestamp", String(timestamp)), ("webhook-signature", signedWebhook)])
            Self.expect(Posts(signed: try await webhook(body, key), replayed: try await webhook(body, key), rewritten: rewrittenWebhook,
                              forged: try await webhook(body, other)), "webhook")
            #expect(try await harness.depth(queue) == 6)

            // WhatsApp: X-Hub-Signature-256 over the body under the app secret; Herald's mark on the status.
            let notification = Array(#"""
                {"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"messaging_product":"whatsapp",
                 "metadata":{"phone_number_id":"109876543210"},"statuses":[{"id":"wamid.\#(harness.namespace)","status":"delivered",
                 "timestamp":"\#(timestamp)","recipient_id":"4915112345678","biz_opaque_callback_data":"herald:\#(harness.namespace)"}]}}]}]}
                """#.utf8)
            func hub(_ body: [UInt8], _ secret: String) -> String {
                "sha256=" + HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(secret.utf8))).map { String(format: "%02x", $0) }.joined()
            }
            func meta(_ body: [UInt8], _ signature: String) async throws -> APIProcess.Answer {
                try await api.call(.POST, "/v1/receipts/whatsapp", body: String(decoding: body, as: UTF8.self), auth: Auth.none,
                                   headers: [("X-Hub-Signature-256", signature)])
            }
            let rewrittenNotification = Array(String(decoding: notification, as: UTF8.self).replacingOccurrences(of: #""delivered""#, with: #""failed""#).utf8)
            Self.expect(Posts(signed: try await meta(notification, hub(notification, appSecret)), replayed: try await meta(notification, hub(notification, appSecret)),
                              rewritten: try await meta(rewrittenNotification, hub(notification, appSecret)),
                              forged: try await meta(notification, hub(notification, "a-guess"))), "whatsapp", taken: 200)
            // Each signed receipt and its replay published, nothing refused: four jobs, each twice under one message id.
            var ids: [String: Int] = [:]
            while let delivery = try await harness.connection.get(queue: queue) {
                ids[delivery.properties.messageID ?? "none", default: 0] += 1
                try await delivery.ack()
            }
            #expect(ids.count == 4 && ids.values.allSatisfy { $0 == 2 }, "\(ids)")
        }
    }
}
