import Logging
import PostgresNIO

/// Commits finished jobs in groups (see ``GroupBatcher``): the handlers' writes, the
/// ledger's outcomes and the events of a batch go in one transaction. The outcomes and the
/// events are one statement; a batch without writes (an SMS sent, a push delivered) is that
/// statement alone, atomic on its own: one round trip instead of four (`BEGIN`, the
/// outcomes, the events, `COMMIT`). A batch that fails for a reason other than availability
/// is retried one job at a time, so one bad write fails only its own job.
struct OutcomeCommitter: Sendable {
    typealias Write = @Sendable (PostgresConnection, Logger) async throws -> Void

    struct Item: Sendable {
        var finished: JobLedger.Finished
        var events: [OutgoingEvent]
        var write: Write?
    }

    private let batcher: GroupBatcher<Item, Void>

    init(client: PostgresClient, eventsExchange: String, maxBatch: Int, timeout: Duration, metrics: RunnerMetrics, logger: Logger) {
        @Sendable func store(_ batch: [Item]) async throws {
            let writes = batch.compactMap(\.write)
            let (ids, statuses, reasons) = JobLedger.columns(batch.map(\.finished))
            let (names, messageIDs, bodies) = EventOutbox.columns(batch.flatMap(\.events))
            let statement = JobsFinish(messageIDs: ids, statuses: statuses, reasons: reasons, exchange: eventsExchange, eventNames: names,
                                       eventMessageIDs: messageIDs, eventBodies: bodies)
            guard !writes.isEmpty else {
                try await statement.rows(on: client, logger: logger)
                return
            }
            try await client.withTransaction(logger: logger) { connection in
                for write in writes { try await write(connection, logger) }
                try await statement.rows(on: connection, logger: logger)
            }
        }
        batcher = GroupBatcher(maxBatch: maxBatch, timeout: timeout, onBatch: { metrics.batch(size: $0) },
                               together: { batch in try await store(batch); return batch.map { _ in () } },
                               alone: { item in try await store([item]) })
    }

    func commit(_ finished: JobLedger.Finished, events: [OutgoingEvent], write: Write?) async throws {
        try await batcher.submit(Item(finished: finished, events: events, write: write))
    }
}
