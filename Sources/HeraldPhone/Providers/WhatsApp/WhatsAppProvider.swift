import AsyncHTTPClient
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging
import NIOCore

/// WhatsApp Business Cloud API: `POST {base}/{phone_number_id}/messages`, `Authorization: Bearer`,
/// an authentication template (`sms.whatsapp.template`) whose body parameter and URL button
/// parameter are the code (the copy-code / one-tap button), in the job's language. 200 carries
/// `messages[0].id` (`wamid.…`, recorded: the status webhooks name it). Errors carry Graph's
/// `error.code`, recorded as `whatsapp-<code>`, and are judged by it first: Meta answers its
/// throttles and outages with 400 too (130429 throughput, 131056 pair rate, 80007 and 4 rate
/// limits, 1, 2, 131000, 131016 temporary), so those go to the next provider or the retry; any
/// other 4xx (131026 undeliverable, 132000/132001 the template, 100 a bad parameter) is final;
/// 401 (190, the token) and 5xx are transient.
/// Each send carries `biz_opaque_callback_data` `herald:<message id>`, which Meta echoes in the
/// message's status webhooks: herald-api keeps only statuses of messages Herald sent
/// (`WhatsAppCallbackData.sentByHerald(_:)`); another sender's on the same business number are dropped at once.
public struct WhatsAppProvider: DeliveryProvider {
    let configuration: SMSConfiguration.WhatsApp
    let http: ProviderHTTP
    public var name: String { "whatsapp" }

    /// Graph error codes that say "not now" whatever the HTTP status (Meta's error reference).
    static let transientCodes: Set<Int> = [1, 2, 4, 80007, 130429, 131000, 131016, 131056]

    struct Payload: Encodable {
        struct Template: Encodable {
            struct Language: Encodable { var code: String }
            struct Component: Encodable {
                struct Parameter: Encodable { var type = "text"; var text: String }
                var type: String
                var subType: String?
                var index: String?
                var parameters: [Parameter]
                enum CodingKeys: String, CodingKey { case type, index, parameters, subType = "sub_type" }
            }
            var name: String
            var language: Language
            var components: [Component]
        }
        var messagingProduct = "whatsapp"
        var recipientType = "individual"
        var to: String
        var type = "template"
        var template: Template
        var callbackData: String
        enum CodingKeys: String, CodingKey {
            case to, type, template
            case messagingProduct = "messaging_product", recipientType = "recipient_type", callbackData = "biz_opaque_callback_data"
        }
    }

    /// The body of one send: the number without its `+`, the code in the body and the button, and
    /// Herald's mark with the job's message id (not a secret; Meta's limit is 512 characters).
    static func payload(to: String, code: String, template: String, language: String, messageID: String) -> Payload {
        Payload(to: String(to.drop { $0 == "+" }), template: .init(name: template, language: .init(code: language), components: [
            .init(type: "body", parameters: [.init(text: code)]),
            .init(type: "button", subType: "url", index: "0", parameters: [.init(text: code)]),
        ]), callbackData: WhatsAppCallbackData.mark(messageID: messageID))
    }

    public func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        let payload = Self.payload(to: message.to, code: message.code.revealed, template: configuration.template,
                                   language: configuration.language(for: message.locale), messageID: message.messageID)
        guard let body = try? JSONEncoder().encode(payload) else { return .refused("encoding") }
        var request = HTTPClientRequest(url: "\(configuration.baseURL)/\(PercentEncoding.form.encode(configuration.phoneNumberID))/messages")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.accessToken)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        return await http.send(request, logger: context.logger) { status, answer in
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: answer))) as? [String: Any]
            let number = (json?["error"] as? [String: Any])?["code"] as? Int
            let code = number.map { "whatsapp-\($0)" }
            if let number, let code, Self.transientCodes.contains(number), !(200..<300).contains(status) {
                return .next(code, httpStatus: status)
            }
            if let failure = ProviderHTTP.classify(status: status, code: code) { return ProviderAnswer(failure, httpStatus: status) }
            let id = ((json?["messages"] as? [[String: Any]])?.first?["id"] as? String)
            return id.map { .accepted($0, httpStatus: status) } ?? .next("whatsapp-no-message-id", httpStatus: status)
        }
    }
}
