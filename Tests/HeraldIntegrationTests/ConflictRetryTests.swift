import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import HeraldRuntime

/// ``Database/retryingConflicts(_:)`` against the real PostgreSQL: a conflict raised inside a
/// transaction reaches it wrapped in `PostgresTransactionError`, and is retried all the same.
@Suite struct ConflictRetryTests {
    @Test(arguments: ["40P01", "40001", "23505"])
    func aConflictInsideATransactionIsRetried(sqlState: String) async throws {
        try await withHarness { harness in
            let attempts = Mutex(0)
            let answer = try await Database.retryingConflicts {
                try await harness.database.withTransaction(logger: harness.logger) { connection in
                    if attempts.withLock({ $0 += 1; return $0 }) == 1 {
                        try await connection.query("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '\(unescaped: sqlState)'; END $$", logger: harness.logger)
                    }
                    return "second"
                }
            }
            #expect(answer == "second")
            #expect(attempts.withLock { $0 } == 2)
        }
    }

    @Test func anotherErrorIsNotRetried() async throws {
        try await withHarness { harness in
            let attempts = Mutex(0)
            await #expect(throws: PostgresTransactionError.self) {
                try await Database.retryingConflicts {
                    try await harness.database.withTransaction(logger: harness.logger) { connection in
                        attempts.withLock { $0 += 1 }
                        try await connection.query("SELECT 1 / 0", logger: harness.logger)
                    }
                }
            }
            #expect(attempts.withLock { $0 } == 1)
        }
    }

    @Test func aConflictThatPersistsEndsAfterFiveAttempts() async throws {
        try await withHarness { harness in
            let attempts = Mutex(0)
            await #expect(throws: PostgresTransactionError.self) {
                try await Database.retryingConflicts {
                    try await harness.database.withTransaction(logger: harness.logger) { connection in
                        attempts.withLock { $0 += 1 }
                        try await connection.query("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40P01'; END $$", logger: harness.logger)
                    }
                }
            }
            #expect(attempts.withLock { $0 } == 5)
        }
    }
}
