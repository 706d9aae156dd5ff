import HeraldRuntime
import Logging
import PostgresNIO
import Synchronization

/// Decides concurrent SMS jobs together: while one group is with PostgreSQL, the requests
/// that arrive wait and go in the next (``GroupBatcher``: no timer, so a lone job waits for
/// nothing), in one `herald.sms_prepare_batch` call (``SMSStore/prepare(_:client:logger:)``).
/// A group that fails for a reason other than the database being away is decided again one
/// request at a time, so one bad request fails only its own job.
final class SMSPreparer: Sendable {
    /// At most this many requests per call (the largest prefetch one worker runs at once).
    static let maxGroup = 64

    private struct Item: Sendable {
        var request: SMSStore.Request
        var client: PostgresClient
        var logger: Logger
    }

    private let batcher: GroupBatcher<Item, SMSStore.Decision>

    init(timeout: Duration = .seconds(15)) {
        batcher = GroupBatcher(maxBatch: Self.maxGroup, timeout: timeout) { items in
            try await Self.decide(items)
        }
    }

    func prepare(_ request: SMSStore.Request, client: PostgresClient, logger: Logger) async throws -> SMSStore.Decision {
        try await batcher.submit(Item(request: request, client: client, logger: logger))
    }

    private static func decide(_ items: [Item]) async throws -> [Result<SMSStore.Decision, any Error>] {
        let first = items[0]
        // The worker's settings travel with each request; a group shares them (one handler's).
        guard items.allSatisfy({ Self.sameSettings($0.request, first.request) }) else { return await oneByOne(items) }
        do {
            return try await SMSStore.prepare(items.map(\.request), client: first.client, logger: first.logger).map { .success($0) }
        } catch where DatabaseAvailability.isUnavailable(error) || items.count == 1 {
            throw error
        } catch {
            return await oneByOne(items)
        }
    }

    private static func oneByOne(_ items: [Item]) async -> [Result<SMSStore.Decision, any Error>] {
        var results: [Result<SMSStore.Decision, any Error>] = []
        for item in items {
            do {
                results.append(.success(try await SMSStore.prepare(item.request, client: item.client, logger: item.logger)))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    private static func sameSettings(_ a: SMSStore.Request, _ b: SMSStore.Request) -> Bool {
        a.ttlSeconds == b.ttlSeconds && a.maxAttempts == b.maxAttempts && a.resendIntervalSeconds == b.resendIntervalSeconds
            && a.ownerKey == b.ownerKey && a.guessing == b.guessing
    }
}
