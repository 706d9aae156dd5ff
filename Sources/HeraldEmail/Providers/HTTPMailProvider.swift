import AsyncHTTPClient
import Foundation
import HeraldRuntime
import NIOCore

/// Delivers through an HTTP mail API: one JSON `POST` with `Authorization: Bearer <token>`:
/// `{"from","to","reply_to","subject","text","html","message_id"}`. 2xx accepted (an `id`
/// in the answer is kept); 4xx about the message final; 5xx, 429, 401/403 transient.
struct HTTPMailProvider: DeliveryProvider {
    let configuration: EmailConfiguration.HTTPMail
    let http: ProviderHTTP
    var name: String { "http_mail" }

    func send(_ message: EmailMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        var body: [String: String] = [
            "from": message.from, "to": message.to, "subject": message.subject,
            "text": message.text.revealed, "html": message.html.revealed, "message_id": message.messageID,
        ]
        if let replyTo = message.replyTo, !replyTo.isEmpty { body["reply_to"] = replyTo }
        guard let json = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]) else {
            return .refused("http-mail-encoding")
        }
        var request = HTTPClientRequest(url: configuration.url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: message.jobMessageID)
        request.body = .bytes(ByteBuffer(bytes: json))
        switch await http.execute(request, logger: context.logger) {
        case .timeout:
            return .timeout
        case .unreachable(let what):
            return .next("http-mail-unreachable: \(what)")
        case .response(let status, let answer):
            if let refusal = ProviderHTTP.classify(status: status, code: nil) { return ProviderAnswer(refusal, httpStatus: status) }
            let object = (try? JSONSerialization.jsonObject(with: Data(buffer: answer))) as? [String: Any]
            return .accepted((object?["id"] as? String) ?? message.messageID, httpStatus: status)
        }
    }
}
