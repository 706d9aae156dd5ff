import Foundation
@testable import HeraldCleanup
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

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

extension CleanupTests {
    /// The `account.deleted` bodies a batch writes (built by PostgreSQL in accounts_delete_batch.sql)
    /// are byte for byte what ``AccountDeletedEvent`` builds in Swift for the same account,
    /// escaping included; each has its own message id.
    @Test func theEventsABatchWritesAreTheSwiftBodies() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let ids = ["body-plain", "body-q\"uote", "body-back\\slash", "body-é-ünï-✓", "body-tab\there", "body-ctl\u{1}x", "body-nl\nx"]
        // Whole milliseconds: both sides print milliseconds.
        let created = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 40 * 86_400).rounded(.down))
        try await db.client.query("""
            INSERT INTO herald.accounts (id, created_at) SELECT id, \(created) FROM unnest(\(ids)::text[]) AS u(id)
            """, logger: db.logger)
        var configuration = CleanupConfiguration()
        configuration.batchSize = 3
        configuration.pace = .off
        let exchange = "tcleanupbody.events"
        let runID = "body-\(UUID().uuidString.prefix(6))"
        #expect(try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: exchange).status == .completed)
        var bodies: [String: String] = [:]
        var messageIDs = Set<String>()
        for try await (name, messageID, body) in try await db.client.query("""
            SELECT name, message_id, body FROM herald.event_outbox WHERE exchange = \(exchange)
            """, logger: db.logger).decode((String, String, String).self) {
            #expect(name == AccountDeletedEvent.name)
            messageIDs.insert(messageID)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            bodies[try #require(object["account_id"] as? String)] = body
            let deletedAt = try #require((object["deleted_at"] as? String).flatMap { try? Date($0, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) })
            // Half a millisecond on: the parsed Double may sit just under the printed millisecond.
            let swift = AccountDeletedEvent(accountID: try #require(object["account_id"] as? String), createdAt: created,
                                            deletedAt: deletedAt.addingTimeInterval(0.0005), runID: runID).outgoing
            #expect(body == String(decoding: swift.body, as: UTF8.self))
            #expect(UUID(uuidString: messageID) != nil && messageID == messageID.lowercased())
        }
        #expect(Set(bodies.keys) == Set(ids), "one event per account")
        #expect(messageIDs.count == ids.count)
        try await db.dropOutbox(exchange: exchange)
    }
}
