import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The batches of ``CleanupRunner``: each is one transaction.
extension CleanupRunner {
    /// One batch of accounts; nil when the run refused it (cancelled, or the cap was passed
    /// by another worker's batch): it rolled back, and the caller looks at the run again.
    /// `paused`: the pause taken before it, added to the run's `paused_ms`.
    func deleteBatch(runID: String, limit: Int, paused: Duration = .zero) async throws -> Int? {
        let (logger, exchange) = (self.logger, eventsExchange)
        do {
            return try await client.withTransaction(logger: logger) { connection in
                // Lock, then delete by ctid (a TID scan): a join on id would make the planner
                // hash the whole table once the batch is large. The same statement writes one
                // account.deleted per deleted row to the outbox (SQL/queries/accounts_delete_batch.sql).
                let deleted = try await AccountsDeleteBatch(exchange: exchange, runID: runID, limit: limit)
                    .first(on: connection, logger: logger)?.deleted ?? 0
                guard deleted > 0 else { return 0 }
                try await Self.count(runID: runID, accounts: deleted, paused: paused, on: connection, logger: logger)
                return deleted
            }
        } catch is BatchRefused {
            return nil
        } catch let error as PostgresTransactionError {
            if error.closureError is BatchRefused { return nil }
            throw error
        }
    }

    /// Adds a batch to the run's counts, or throws ``BatchRefused`` (the batch rolls back)
    /// when the run was cancelled or the batch would pass the cap. Counting is allowed after
    /// another worker completed the run: its last look saw this batch's rows as still there.
    static func count(runID: String, accounts: Int = 0, purged target: String? = nil, rows: Int = 0, paused: Duration = .zero,
                      on connection: PostgresConnection, logger: Logger) async throws {
        let pausedMilliseconds = Int((paused.nanoseconds + 500_000) / 1_000_000)
        let counted = try await CleanupRunCount(accounts: accounts, target: target ?? "", purgedRows: rows, pausedMilliseconds: pausedMilliseconds,
                                                runID: runID).first(on: connection, logger: logger)
        if counted == nil { throw BatchRefused() }
    }

    /// Whether an eligible account is left, locked or not.
    func anyEligible() async throws -> Bool {
        try await AnyEligible().first(on: client, logger: logger)?.exists ?? false
    }

    /// One batch of a purge target; nil when the run refused it.
    func purgeBatch(_ target: PurgeTarget, runID: String, paused: Duration = .zero) async throws -> Int? {
        let (logger, limit) = (self.logger, configuration.batchSize)
        do {
            return try await client.withTransaction(logger: logger) { connection in
                var purged = 0
                for try await count in try await connection.query("""
                    WITH gone AS (
                        DELETE FROM \(unescaped: target.table) WHERE ctid = ANY (ARRAY(
                            SELECT ctid FROM \(unescaped: target.table) WHERE \(unescaped: target.condition)
                             LIMIT \(limit) FOR UPDATE SKIP LOCKED))
                        RETURNING 1
                    )
                    SELECT count(*)::bigint FROM gone
                    """, logger: logger).decode(Int.self) {
                    purged = count
                }
                if purged > 0 { try await Self.count(runID: runID, purged: target.name, rows: purged, paused: paused, on: connection, logger: logger) }
                return purged
            }
        } catch let error as PostgresTransactionError {
            if error.closureError is BatchRefused { return nil }
            throw error
        }
    }

    /// The coming week's partitions of every day-partitioned table (functions/partitions.sql).
    func ensureDays() async throws {
        for row in try await PartitionsEnsureAll().rows(on: client, logger: logger) where row.made > 0 {
            logger.info("created day partitions", metadata: ["partitions": "\(row.made)"])
        }
    }

    /// Drops the days of a day-partitioned target wholly past its retention, in one transaction
    /// that also counts them in the run: PostgreSQL's estimate of their rows (counting a busy
    /// day would read all of it; see functions/partitions.sql); nil when the run refused it. A
    /// table busy past the drop's lock timeout is left to the next run (0).
    func dropDays(_ target: PurgeTarget, runID: String) async throws -> Int? {
        let logger = self.logger
        do {
            let (rows, days) = try await client.withTransaction(logger: logger) { connection in
                // The run's row first: the table's lock, once the drop has it, is not held while
                // this waits for another worker's count.
                try await CleanupRunLock(id: runID).rows(on: connection, logger: logger)
                var rows = 0, days = 0
                for dropped in try await PartitionsDrop(table: target.table, retentionDays: target.retentionDays).rows(on: connection, logger: logger) {
                    let (partition, estimated, moved) = (dropped.partition, dropped.estimatedRows, dropped.movedRows)
                    rows += estimated
                    days += 1
                    logger.info("dropped a day", metadata: ["run_id": "\(runID)", "partition": "\(partition)",
                                                            "estimated_rows": "\(estimated)",
                                                            "unfinished_moved": "\(moved)"])
                }
                if days > 0 { try await Self.count(runID: runID, purged: target.name, rows: rows, on: connection, logger: logger) }
                return (rows, days)
            }
            if days > 0 {
                metrics.purged(rows, target: target.name)
                metrics.droppedDays(days, target: target.name)
            }
            return rows
        } catch let error as PostgresTransactionError {
            if error.closureError is BatchRefused { return nil }
            if let refused = error.closureError as? PSQLError, let state = refused.serverInfo?[.sqlState], ["55P03", "40P01"].contains(state) {
                logger.warning("table busy: its days are left to the next run", metadata: ["run_id": "\(runID)", "target": "\(target.name)",
                                                                                          "sqlstate": "\(state)"])
                return 0
            }
            throw error
        }
    }
}
