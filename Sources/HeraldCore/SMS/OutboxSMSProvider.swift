import Foundation
import Logging
import PostgresNIO

/// The dev SMS provider: records the message in `herald.dev_outbox` with the code masked,
/// and, when `outbox.directory` is set, appends it in full to `sms.jsonl` there (a stand-in
/// phone: that file is how a dev run or a demo reads its codes; never use it in production).
struct OutboxSMSProvider: SMSProvider {
    let spool: OutboxSpool?
    let delay: Duration
    var name: String { "outbox" }

    func send(_ message: SMSMessage, context: SMSSendContext) async -> SMSProviderResponse {
        if delay > .zero { try? await Task.sleep(for: delay) }
        let body: [String: Any] = ["text": message.maskedText, "encoding": message.encoding.scheme.rawValue, "segments": message.encoding.segments]
        let entry = DevOutbox.Entry(
            kind: JobKind.sms.rawValue, messageID: message.messageID, jobType: SMSVerificationJob.typeName,
            recipient: Redact.phone(message.to),
            body: String(decoding: (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self))
        do {
            try await context.database.withConnection { connection in
                try await DevOutbox.record(entry, on: connection, logger: context.logger)
            }
            spool?.append(kind: "sms", ["to": message.to, "text": message.text.revealed, "verification_id": message.verificationID])
            return SMSProviderResponse(.accepted(providerMessageID: "outbox-\(message.messageID)"))
        } catch {
            return SMSProviderResponse(.transient(code: "outbox-database"))
        }
    }
}

/// Appends one JSON line per delivered dev message to `<directory>/<kind>.jsonl`.
public struct OutboxSpool: Sendable {
    public let directory: String

    public init?(directory: String) {
        guard !directory.isEmpty else { return nil }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
    }

    public func path(kind: String) -> String { (directory as NSString).appendingPathComponent("\(kind).jsonl") }

    func append(kind: String, _ fields: [String: String]) {
        var record: [String: String] = fields
        record["at"] = Date().iso8601
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        // O_APPEND: one write per line keeps concurrent writers' lines whole.
        let fd = open(path(kind: kind), O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
