import Logging
import PostgresNIO

/// Commits finished jobs in groups: while one transaction is in flight, the outcomes that
/// finish meanwhile queue up and go together in the next (group commit, no timers). A batch
/// that fails for a reason other than availability is retried one job at a time, so one
/// bad write fails only its own job.
actor OutcomeCommitter {
    typealias Write = @Sendable (PostgresConnection, Logger) async throws -> Void

    private struct Item {
        var finished: JobLedger.Finished
        var events: [OutgoingEvent]
        var write: Write?
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let client: PostgresClient
    private let logger: Logger
    private let maxBatch: Int
    private let eventsExchange: String
    private let metrics: RunnerMetrics
    private var pending: [Item] = []
    private var flushing = false

    init(client: PostgresClient, eventsExchange: String, maxBatch: Int, metrics: RunnerMetrics, logger: Logger) {
        self.client = client
        self.eventsExchange = eventsExchange
        self.maxBatch = maxBatch
        self.metrics = metrics
        self.logger = logger
    }

    func commit(_ finished: JobLedger.Finished, events: [OutgoingEvent], write: Write?) async throws {
        try await withCheckedThrowingContinuation { continuation in
            pending.append(Item(finished: finished, events: events, write: write, continuation: continuation))
            if !flushing {
                flushing = true
                Task { await self.flush() }
            }
        }
    }

    private func flush() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            do {
                try await store(batch)
                metrics.batch(size: batch.count)
                batch.forEach { $0.continuation.resume() }
            } catch where DatabaseAvailability.isUnavailable(error) || batch.count == 1 {
                batch.forEach { $0.continuation.resume(throwing: error) }
            } catch {
                for item in batch {
                    do {
                        try await store([item])
                        item.continuation.resume()
                    } catch {
                        item.continuation.resume(throwing: error)
                    }
                }
            }
        }
        flushing = false
    }

    private func store(_ batch: [Item]) async throws {
        let logger = self.logger
        let writes = batch.compactMap(\.write)
        let finished = batch.map(\.finished)
        let events = batch.flatMap(\.events)
        let exchange = eventsExchange
        try await client.withTransaction(logger: logger) { connection in
            for write in writes { try await write(connection, logger) }
            try await JobLedger.finish(finished, on: connection, logger: logger)
            try await EventOutbox.insert(events, exchange: exchange, on: connection, logger: logger)
        }
    }
}
