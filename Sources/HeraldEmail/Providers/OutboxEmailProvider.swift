import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The dev email provider (``DevOutboxDelivery``): the message in `herald.dev_outbox` with the
/// link's code (or the one-time code) masked, in full in `email.jsonl` of `outbox.directory` (how a dev run or a demo
/// follows its links).
struct OutboxEmailProvider: DeliveryProvider {
    let outbox: DevOutboxDelivery
    var name: String { "outbox" }

    func send(_ message: EmailMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        let entry = DevOutbox.Entry(
            kind: JobKind.email.rawValue, messageID: message.jobMessageID, jobType: message.jobType,
            recipient: Redact.email(message.to),
            body: DevOutboxDelivery.body(["subject": message.subject, "kind": message.kind, "text": message.maskedText ?? Self.masked(message.text.revealed)]))
        return await outbox.deliver(entry, spooled: [
            "to": message.to, "subject": message.subject, "text": message.text.revealed, "html": message.html.revealed,
            "request_id": message.requestID, "kind": message.kind,
        ], context: context)
    }

    /// The text with every `oobCode=` value replaced by asterisks.
    static func masked(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let range = rest.range(of: "oobCode=") {
            out += rest[..<range.upperBound] + "********"
            rest = rest[range.upperBound...].drop { !("&#\"' \r\n<>".contains($0)) }
        }
        return out + rest
    }
}
