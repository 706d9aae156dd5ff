import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The batches of ``CleanupWorker``: each is one transaction.
extension CleanupWorker {
    /// One batch of accounts; nil when the run refused it (cancelled, or the cap was passed
    /// by another worker's batch): it rolled back, and the caller looks at the run again.
    /// `paused`: the pause taken before it, added to the run's `paused_ms`.
    func deleteBatch(runID: String, limit: Int, paused: Duration = .zero) async throws -> Int? {
        let (logger, exchange) = (self.logger, eventsExchange)
        do {
            return try await client.withTransaction(logger: logger) { connection in
                // Lock, then delete by ctid (a TID scan): a join on id would make the planner
                // hash the whole table once the batch is large. The same statement writes one
                // account.deleted per deleted row to the outbox (AccountDeletedSQL).
                var binds = PostgresBindings()
                binds.append(exchange)
                binds.append(runID)
                var deleted = 0
                for try await count in try await connection.query(PostgresQuery(unsafeSQL: Self.deleteStatement(limit: limit), binds: binds),
                                                                   logger: logger).decode(Int.self) {
                    deleted = count
                }
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

    /// Deletes up to `limit` eligible accounts and writes their `account.deleted` events
    /// (exchange `$1`, run id `$2`); returns the count.
    static func deleteStatement(limit: Int) -> String {
        """
        WITH gone AS (
            DELETE FROM herald.accounts WHERE ctid = ANY (ARRAY(
                \(CleanupEligibility.select("a.ctid", "a", limit: limit, locking: "FOR UPDATE OF a SKIP LOCKED"))))
            RETURNING id, created_at
        ), events AS (
            INSERT INTO herald.event_outbox (exchange, name, message_id, body)
            SELECT $1, '\(AccountDeletedEvent.name)', gen_random_uuid()::text, \(AccountDeletedSQL.body("gone", runIDParameter: "$2"))
              FROM gone
            RETURNING 1
        )
        SELECT count(*)::bigint FROM events
        """
    }

    /// Adds a batch to the run's counts, or throws ``BatchRefused`` (the batch rolls back)
    /// when the run was cancelled or the batch would pass the cap. Counting is allowed after
    /// another worker completed the run: its last look saw this batch's rows as still there.
    static func count(runID: String, accounts: Int = 0, purged target: String? = nil, rows: Int = 0, paused: Duration = .zero,
                      on connection: PostgresConnection, logger: Logger) async throws {
        let key = target ?? ""
        let pausedMilliseconds = Int((paused.nanoseconds + 500_000) / 1_000_000)
        let updated = try await connection.query("""
            UPDATE herald.cleanup_runs
               SET accounts_deleted = accounts_deleted + \(accounts),
                   purged = CASE WHEN \(key) = '' THEN purged
                                 ELSE jsonb_set(purged, ARRAY[\(key)], to_jsonb(coalesce((purged ->> \(key))::bigint, 0) + \(rows))) END,
                   batches = batches + 1,
                   paused_ms = paused_ms + \(pausedMilliseconds),
                   heartbeat_at = now(),
                   ended_at = CASE WHEN ended_at IS NULL THEN NULL ELSE greatest(ended_at, now()) END
             WHERE id = \(runID) AND status IN ('running', 'completed')
               AND accounts_deleted + \(accounts) <= max_accounts
            RETURNING 1
            """, logger: logger)
        var any = false
        for try await _ in updated { any = true }
        if !any { throw BatchRefused() }
    }

    /// Whether an eligible account is left, locked or not.
    func anyEligible() async throws -> Bool {
        for try await exists in try await client.query("""
            SELECT EXISTS (SELECT 1 FROM herald.accounts a WHERE \(unescaped: CleanupEligibility.predicate("a")))
            """, logger: logger).decode(Bool.self) {
            return exists
        }
        return false
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
        for try await made in try await client.query("SELECT herald.partitions_ensure_all(7)", logger: logger).decode(Int.self) where made > 0 {
            logger.info("created day partitions", metadata: ["partitions": "\(made)"])
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
                try await connection.query("SELECT 1 FROM herald.cleanup_runs WHERE id = \(runID) FOR UPDATE", logger: logger)
                var rows = 0, days = 0
                for try await (partition, estimated, moved) in try await connection.query("""
                    SELECT partition, estimated_rows, moved_rows
                      FROM herald.partitions_drop('\(unescaped: target.table)'::regclass, \(unescaped: target.cutoff))
                    """, logger: logger).decode((String, Int, Int).self) {
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
