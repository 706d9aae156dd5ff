import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import PostgresNIO
import Testing

/// The idempotency ledger's claim rules, against the real PostgreSQL.
@Suite(.needsServers) struct JobLedgerTests {
    /// Records `id`'s final outcome as the runner does (``OutcomeCommitter``'s statement, no events).
    private func finish(_ id: String, _ status: JobStatus, reason: String? = nil, _ harness: Harness) async throws {
        let (ids, statuses, reasons) = JobLedger.columns([.init(messageID: id, status: status, reason: reason)])
        try await JobsFinish(messageIDs: ids, statuses: statuses, reasons: reasons, exchange: "herald.events", eventNames: [], eventMessageIDs: [],
                             eventBodies: []).rows(on: harness.database, logger: harness.logger)
    }

    @Test func aClaimIsOwnedUntilItsWorkerIsGoneThenTakenOver() async throws {
        try await withHarness() { harness in
            let ledger = JobLedger(client: harness.database, logger: harness.logger)
            let id = UUID().uuidString
            let owner = Int64.random(in: 1...Int64.max / 2)
            let other = owner + 1
            func claim(_ key: Int64, _ token: String) async throws -> JobLedger.Claim {
                try await ledger.claim(messageID: id, jobType: "sms.verification.v1", queue: "sms", ownerKey: key, token: token, leaseSeconds: 300)
            }
            try await harness.database.withConnection { presence in
                // The owner process is alive: it holds its presence lock.
                try await presence.query("SELECT pg_advisory_lock(\(owner))", logger: harness.logger)
                #expect(try await claim(owner, "a") == .claimed(attempt: 1, tookOver: false))
                // The same delivery's claim again (its first answer was lost): still its own.
                #expect(try await claim(owner, "a") == .claimed(attempt: 1, tookOver: false))
                // Another delivery of the same message while the owner lives: busy.
                #expect(try await claim(other, "b") == .busy)
                #expect(try await claim(owner, "c") == .busy)
                try await presence.query("SELECT pg_advisory_unlock(\(owner))", logger: harness.logger)
            }
            // The owner is gone (its lock with it): taken over at once, counted as a possible repeat.
            #expect(try await claim(other, "d") == .claimed(attempt: 2, tookOver: true))
            try await ledger.markRetrying(messageID: id, reason: "503")
            #expect(try await claim(other, "e") == .claimed(attempt: 3, tookOver: false))
            try await finish(id, .completed, harness)
            #expect(try await claim(owner, "f") == .finished(status: .completed))
            // Replay from the dead-letter queue reopens only dead or rejected jobs.
            try await ledger.reopen(messageIDs: [id])
            #expect(try await claim(owner, "g") == .finished(status: .completed))
        }
    }

    @Test func aBatchClaimsEachMessageOnceAndAnswersInOrder() async throws {
        try await withHarness() { harness in
            let ledger = JobLedger(client: harness.database, logger: harness.logger)
            let (a, b, c) = (UUID().uuidString, UUID().uuidString, UUID().uuidString)
            _ = try await ledger.claim(messageID: c, jobType: "t", queue: "sms", ownerKey: 1, token: "c0", leaseSeconds: 300)
            try await finish(c, .rejected, reason: "policy", harness)
            let answers = try await ledger.claim([
                .init(messageID: b, jobType: "t", token: "b1"),
                .init(messageID: a, jobType: "t", token: "a1"),
                .init(messageID: a, jobType: "t", token: "a2"),
                .init(messageID: c, jobType: "t", token: "c1"),
            ], queue: "sms", ownerKey: 2, leaseSeconds: 300)
            #expect(answers == [.claimed(attempt: 1, tookOver: false), .claimed(attempt: 1, tookOver: false), .busy, .finished(status: .rejected)])
        }
    }
}
