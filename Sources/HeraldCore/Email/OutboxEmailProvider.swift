import Foundation
import Logging
import PostgresNIO

/// The dev email provider: records the message in `herald.dev_outbox` with the link's code
/// masked, and, when `outbox.directory` is set, appends it in full to `email.jsonl` there
/// (a stand-in mailbox: how a dev run or a demo follows its links; never in production).
struct OutboxEmailProvider: EmailProvider {
    let spool: OutboxSpool?
    let delay: Duration
    var name: String { "outbox" }

    func send(_ message: EmailMessage, context: EmailSendContext) async -> EmailProviderAnswer {
        if delay > .zero { try? await Task.sleep(for: delay) }
        let body: [String: Any] = ["subject": message.subject, "kind": message.kind, "text": Self.masked(message.text.revealed)]
        let entry = DevOutbox.Entry(
            kind: JobKind.email.rawValue, messageID: message.jobMessageID, jobType: EmailActionJob.typeName,
            recipient: Redact.email(message.to),
            body: String(decoding: (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self))
        do {
            try await context.database.withConnection { connection in
                try await DevOutbox.record(entry, on: connection, logger: context.logger)
            }
            spool?.append(kind: "email", [
                "to": message.to, "subject": message.subject, "text": message.text.revealed, "html": message.html.revealed,
                "request_id": message.requestID, "kind": message.kind,
            ])
            return .accepted(providerMessageID: "outbox-\(message.jobMessageID)")
        } catch {
            return .transient(code: "outbox-database")
        }
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
