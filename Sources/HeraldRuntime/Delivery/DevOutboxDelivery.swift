import Foundation

/// What every channel's dev outbox provider does: wait `outbox.delay_ms` (a provider's
/// latency), record the message in `herald.dev_outbox` with its secret masked, and, when
/// `outbox.directory` is set, append it in full to `<channel>.jsonl` there (the stand-in
/// phone, mailbox or device a dev run or a demo reads; never in production).
public struct DevOutboxDelivery: Sendable {
    public let spool: OutboxSpool?
    public let delay: Duration

    public init(configuration: OutboxConfiguration) {
        self.spool = OutboxSpool(directory: configuration.directory)
        self.delay = .milliseconds(configuration.delayMilliseconds)
    }

    /// `entry` is what people may read (masked); `spooled` the full message for the spool.
    /// Accepted as `outbox-<message id>`; a database that cannot record it is a failure the
    /// next provider (or a retry) takes. A call cancelled during its latency (the runner's
    /// drain timeout) delivers nothing, as an HTTP request cut before it was sent.
    public func deliver<Detail>(_ entry: DevOutbox.Entry, spooled: [String: String], context: DeliveryContext) async -> ProviderAnswer<Detail> {
        if delay > .zero { try? await Task.sleep(for: delay) }
        if Task.isCancelled { return .next("cancelled") }
        do {
            try await context.database.withConnection { connection in
                try await DevOutbox.record(entry, on: connection, logger: context.logger)
            }
        } catch {
            return .next("outbox-database")
        }
        spool?.append(kind: entry.kind, spooled)
        return .accepted("outbox-\(entry.messageID)")
    }

    /// `fields` as the JSON object stored in `herald.dev_outbox.body`.
    public static func body(_ fields: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
    }
}
