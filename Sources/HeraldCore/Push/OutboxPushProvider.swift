import Foundation
import Logging
import PostgresNIO

/// The dev push provider: records the push in `herald.dev_outbox` without its secret and,
/// when `outbox.directory` is set, appends it in full to `push.jsonl` there (the stand-in
/// device: how a dev run or a demo reads its secrets; never use it in production).
struct OutboxPushProvider: PushProvider {
    let spool: OutboxSpool?
    let delay: Duration
    let payloadKey: String
    let metrics: PushMetrics
    var name: String { "outbox" }

    func send(_ message: PushMessage, logger: Logger, database: PostgresClient) async -> PushProviderResponse {
        let started = ContinuousClock.now
        if delay > .zero { try? await Task.sleep(for: delay) }
        let body: [String: Any] = ["receipt": message.receipt, "platform": message.platform.rawValue,
                                   "environment": message.environment.rawValue, "app_id": message.appID]
        let entry = DevOutbox.Entry(
            kind: JobKind.push.rawValue, messageID: message.messageID, jobType: PushVerificationJob.typeName,
            recipient: PushTokens.hint(message.deviceToken),
            body: String(decoding: (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self))
        let response: PushProviderResponse
        do {
            try await database.withConnection { connection in
                try await DevOutbox.record(entry, on: connection, logger: logger)
            }
            let payload = String(decoding: APNsProvider.payload(message, key: payloadKey), as: UTF8.self)
            spool?.append(kind: "push", ["device_token": message.deviceToken, "platform": message.platform.rawValue,
                                         "receipt": message.receipt, "payload": payload])
            response = PushProviderResponse(.delivered(id: "outbox-\(message.messageID)"))
        } catch {
            response = PushProviderResponse(.transient("outbox-database"))
        }
        metrics.providerCall(name, answer: response.answer, ContinuousClock.now - started)
        return response
    }
}
