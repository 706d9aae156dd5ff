import AsyncHTTPClient
import Crypto
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import NIOCore

/// A generic HTTPS webhook, signed as Standard Webhooks specify: headers `webhook-id`,
/// `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256>`
/// over `id.timestamp.body`, keyed with the base64 part of the `whsec_…` secret. The body:
/// `{"type":"sms.send","timestamp":…,"data":{"to","text","verification_id","encoding","segments"}}`,
/// and `data.registration` (`sender`, `entity_id`, `template_id`) for a region that has one.
/// A 2xx answer may carry `{"message_id": "…"}` (or `id`): the message's name in the provider's
/// receipts; without one, the request's `webhook-id` is. With `sms.receipts.base_url` set, `data`
/// also carries `receipt_url`, where the provider posts its receipts (signed the same way).
///
/// The voice channel's webhook (`sms.voice.providers: [webhook]`, the operator's own telephony
/// placing the call) is the same provider under `sms.voice.webhook_url`: `type` `voice.call`,
/// `data` `to`, `text` (what the call says, the code a digit at a time), `language` (the
/// `<Say>`-style tag of `sms.voice.languages`), `repeat` (2: say it twice), `verification_id`,
/// `receipt_url`; its receipts come to the same endpoint (provider `webhook`).
struct WebhookProvider: DeliveryProvider {
    /// What the webhook asks for: an SMS, or a call that reads the text out.
    enum Kind: Sendable {
        case sms
        case voice(SMSConfiguration.Voice)
    }

    let url: String
    /// The signing key's bytes (`SymmetricKey` is not `Sendable`).
    let key: [UInt8]
    let http: ProviderHTTP
    /// `data.receipt_url`, or nil.
    var receiptURL: String?
    var kind: Kind = .sms
    var name: String { "webhook" }

    /// `url`: the voice webhook's (`sms.voice.webhook_url`) for `.voice`; `sms.webhook.url` otherwise.
    init(configuration: SMSConfiguration.Webhook, http: ProviderHTTP, receiptURL: String? = nil, kind: Kind = .sms) throws(ConfigError) {
        guard let key = StandardWebhooks.key(secret: configuration.secret) else {
            throw ConfigError(key: "sms.webhook.secret", reason: "must be whsec_ and the base64 of at least 24 random bytes")
        }
        if case .voice(let voice) = kind { self.url = voice.webhookURL } else { self.url = configuration.url }
        self.key = key
        self.http = http
        self.receiptURL = receiptURL
        self.kind = kind
    }

    struct Payload: Encodable {
        struct Data: Encodable {
            var to: String
            var text: String
            var verificationID: String
            /// An SMS's length (nil for a call).
            var encoding: String?
            var segments: Int?
            var receiptURL: String?
            var registration: Registration?
            /// A call's language, and how many times it says the text (nil for an SMS).
            var language: String?
            var `repeat`: Int?
            enum CodingKeys: String, CodingKey {
                case to, text, encoding, segments, registration, language, `repeat`, verificationID = "verification_id", receiptURL = "receipt_url"
            }
        }
        /// `data.registration`: what the number's region requires registered (`sms.regions.registration`).
        struct Registration: Encodable {
            var sender: String?
            var entityID: String?
            var templateID: String?
            enum CodingKeys: String, CodingKey { case sender, entityID = "entity_id", templateID = "template_id" }
        }
        var type = "sms.send"
        var timestamp: String
        var data: Data
    }

    /// A 2xx answer's body: its `message_id`, or its `id`. A member that is not a string
    /// counts as missing; anything else in the body is ignored.
    struct Answer: Decodable {
        var messageID: String?
        var id: String?
        enum CodingKeys: String, CodingKey { case messageID = "message_id", id }

        /// The provider's name for the message: `message_id` first.
        var name: String? { messageID ?? id }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            messageID = try? container.decodeIfPresent(String.self, forKey: .messageID)
            id = try? container.decodeIfPresent(String.self, forKey: .id)
        }
    }

    func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        let now = Date()
        let payload: Payload
        switch kind {
        case .sms:
            payload = Payload(
                timestamp: now.iso8601,
                data: .init(to: message.to, text: message.text.revealed, verificationID: message.verificationID,
                            encoding: message.encoding.scheme.rawValue, segments: message.encoding.segments, receiptURL: receiptURL,
                            registration: message.registration.map { .init(sender: $0.sender, entityID: $0.entityID, templateID: $0.templateID) }))
        case .voice(let voice):
            payload = Payload(type: "voice.call", timestamp: now.iso8601,
                              data: .init(to: message.to, text: message.text.revealed, verificationID: message.verificationID, receiptURL: receiptURL,
                                          language: voice.language(for: message.locale), repeat: 2))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let body = try? encoder.encode(payload) else { return .refused("encoding") }
        let id = "msg_" + RandomID.hex()
        let timestamp = Int(now.timeIntervalSince1970)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(name: "webhook-signature", value: StandardWebhooks.signature(id: id, timestamp: timestamp, body: Array(body), key: key))
        request.body = .bytes(ByteBuffer(bytes: body))

        return await http.send(request, logger: context.logger) { status, answer in
            if let failure = ProviderHTTP.classify(status: status, code: nil) { return ProviderAnswer(failure, httpStatus: status) }
            let body = try? JSONDecoder().decode(Answer.self, from: Data(buffer: answer))
            return .accepted(body?.name ?? id, httpStatus: status)
        }
    }
}
