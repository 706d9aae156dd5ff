import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import HeraldRuntime

/// ``Database/retryingConflicts(_:)`` against the real PostgreSQL: a conflict raised inside a
/// transaction reaches it wrapped in `PostgresTransactionError`, and is retried all the same.
@Suite(.needsServers) struct ConflictRetryTests {
    /// Runs a transaction under `retryingConflicts` whose first `failing` attempts run
    /// `statement` (every attempt when nil); how many attempts ran, and the outcome.
    private func run(_ statement: String, failing: Int?, _ harness: Harness) async -> (attempts: Int, result: Result<String, any Error>) {
        let attempts = Mutex(0)
        do {
            let answer = try await Database.retryingConflicts {
                try await harness.database.withTransaction(logger: harness.logger) { connection in
                    let attempt = attempts.withLock { $0 += 1; return $0 }
                    if attempt <= (failing ?? .max) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: harness.logger)
                    }
                    return "attempt \(attempt)"
                }
            }
            return (attempts.withLock { $0 }, .success(answer))
        } catch {
            return (attempts.withLock { $0 }, .failure(error))
        }
    }

    private static func raising(_ sqlState: String) -> String {
        "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '\(sqlState)'; END $$"
    }

    @Test(arguments: ["40P01", "40001", "23505"])
    func aConflictInsideATransactionIsRetried(sqlState: String) async throws {
        try await withHarness { harness in
            let (attempts, result) = await run(Self.raising(sqlState), failing: 1, harness)
            let answer = try result.get()
            #expect(answer == "attempt 2")
            #expect(attempts == 2)
        }
    }

    @Test func anotherErrorIsNotRetried() async throws {
        try await withHarness { harness in
            let (attempts, result) = await run("SELECT 1 / 0", failing: nil, harness)
            #expect(throws: PostgresTransactionError.self) { try result.get() }
            #expect(attempts == 1)
        }
    }

    @Test func aConflictThatPersistsEndsAfterFiveAttempts() async throws {
        try await withHarness { harness in
            let (attempts, result) = await run(Self.raising("40P01"), failing: nil, harness)
            #expect(throws: PostgresTransactionError.self) { try result.get() }
            #expect(attempts == 5)
        }
    }
}
