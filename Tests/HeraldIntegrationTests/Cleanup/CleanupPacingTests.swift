import Foundation
import Testing
@testable import HeraldCleanup
@testable import HeraldRuntime

/// Pacing (`cleanup.pace.*`) against the real PostgreSQL. In ``CleanupTests`` (serialized:
/// the policy row and the one active run are global to the cleanup database).
extension CleanupTests {
    /// A run at a low busy share pauses after its batches and reports it (`paused_ms`, next
    /// to `batches`), and still deletes exactly the eligible accounts; the same run with
    /// pacing off pauses never.
    @Test(arguments: [false, true]) func aPacedRunTakesItsPausesAndDeletesExactlyTheEligible(paced: Bool) async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let eligible = 240
        try await db.insertEligible(eligible, prefix: "paced")
        let kept = (0..<30).map { GeneratedAccount(id: "paced-young-\($0)", ageDays: 3.5, anonymous: true, linked: false) }
            + (0..<30).map { GeneratedAccount(id: "paced-linked-\($0)", ageDays: 90.5, anonymous: true, linked: true) }
            + (0..<30).map { GeneratedAccount(id: "paced-member-\($0)", ageDays: 90.5, anonymous: false, linked: false) }
        try await db.insert(kept)

        var configuration = CleanupConfiguration()
        configuration.batchSize = 20
        configuration.rateLimitPerSecond = 0
        configuration.pace = paced ? CleanupPace(maxBusyPercent: 10, targetBatchMilliseconds: 0) : .off
        let exchange = "tcleanuppace\(paced).events"
        let runID = "paced-\(paced)-\(UUID().uuidString.prefix(6))"
        let outcome = try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: exchange)
        #expect(outcome.status == .completed)
        #expect(try await db.accountIDs() == Set(kept.map(\.id)))
        let events = try await db.outboxAccountIDs(exchange: exchange)
        #expect(events.count == eligible && Set(events) == Set((1...eligible).map { "paced-\($0)" }))
        let run = try #require(try await db.runs.get(runID))
        #expect(run.status == .completed && run.accountsDeleted == eligible)
        #expect(run.batches >= eligible / configuration.batchSize)
        if paced {
            // Every batch after the first followed a pause of 9× the batch before it.
            #expect(run.pausedMilliseconds > 0, "the paced run paused")
            #expect(run.json["paused_ms"] as? Int == run.pausedMilliseconds)
        } else {
            #expect(run.pausedMilliseconds == 0)
        }
        try await db.dropOutbox(exchange: exchange)
    }
}
