import HeraldRuntime
import Logging
import PostgresNIO

/// Concurrent SMS jobs' database steps, grouped: while one group is with PostgreSQL, the
/// requests that arrive wait and go in the next (``GroupBatcher``: no timer, so a lone job
/// waits for nothing). Decisions go in one `herald.sms_prepare_batch` call
/// (``PhoneStore/prepare(_:client:logger:)``), `sent` records in one statement
/// (``PhoneStore/sent(_:client:logger:)``). A group that fails for a reason other than the
/// database being away goes again one job at a time, so one bad job fails only itself.
final class PhoneGroups: Sendable {
    /// At most this many jobs per statement (the largest prefetch one worker runs at once).
    static let maxGroup = 64

    private struct Item<Input: Sendable>: Sendable {
        var input: Input
        var client: PostgresClient
        var logger: Logger
    }

    private let decisions: GroupBatcher<Item<PhoneStore.Request>, PhoneStore.Decision>
    private let sends: GroupBatcher<Item<PhoneStore.Sent>, Void>

    /// `timeout`: `database.operation_timeout_seconds`, the deadline of one group's statement.
    init(timeout: Duration) {
        decisions = GroupBatcher(maxBatch: Self.maxGroup, timeout: timeout, together: { items in
            // The worker's settings travel with each request; a group shares them (one handler's).
            let first = items[0]
            guard items.allSatisfy({ Self.sameSettings($0.input, first.input) }) else { throw MixedSettings() }
            return try await PhoneStore.prepare(items.map(\.input), client: first.client, logger: first.logger)
        }, alone: { item in
            try await PhoneStore.prepare(item.input, client: item.client, logger: item.logger)
        })
        sends = GroupBatcher(maxBatch: Self.maxGroup, timeout: timeout, together: { items in
            try await PhoneStore.sent(items.map(\.input), client: items[0].client, logger: items[0].logger)
            return items.map { _ in () }
        }, alone: { item in
            try await PhoneStore.sent([item.input], client: item.client, logger: item.logger)
        })
    }

    func prepare(_ request: PhoneStore.Request, client: PostgresClient, logger: Logger) async throws -> PhoneStore.Decision {
        try await decisions.submit(Item(input: request, client: client, logger: logger))
    }

    func sent(_ sent: PhoneStore.Sent, client: PostgresClient, logger: Logger) async throws {
        try await sends.submit(Item(input: sent, client: client, logger: logger))
    }

    /// A group of requests made under different settings: decided one by one.
    private struct MixedSettings: Error {}

    private static func sameSettings(_ a: PhoneStore.Request, _ b: PhoneStore.Request) -> Bool {
        a.ttlSeconds == b.ttlSeconds && a.maxAttempts == b.maxAttempts && a.resendIntervalSeconds == b.resendIntervalSeconds
            && a.ownerKey == b.ownerKey && a.guessing == b.guessing
    }
}
