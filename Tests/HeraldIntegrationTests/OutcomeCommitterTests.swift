import Foundation
import HeraldClient
@testable import HeraldRuntime
import HeraldWorkers
import PostgresNIO
import Testing

/// The grouped commit of outcomes and events, against the real PostgreSQL: outcomes and events
/// are one statement, alone for a batch without handler writes, and it must stay as atomic as
/// the transaction it replaced.
@Suite(.needsServers) struct OutcomeCommitterTests {
    private struct Payload: Encodable { var n: Int }

    /// Claims `count` jobs and returns their message ids.
    private func claimed(_ count: Int, harness: Harness) async throws -> [String] {
        try await claimed(count, client: harness.database, logger: harness.logger)
    }

    private func claimed(_ count: Int, client: PostgresClient, logger: Logger) async throws -> [String] {
        let ledger = JobLedger(client: client, logger: logger)
        var ids: [String] = []
        for _ in 0..<count {
            let id = UUID().uuidString
            _ = try await ledger.claim(messageID: id, jobType: "sms.verification.v1", queue: "sms", ownerKey: 1, token: id, leaseSeconds: 300)
            ids.append(id)
        }
        return ids
    }

    private func committer(_ client: PostgresClient, logger: Logger, exchange: String) -> OutcomeCommitter {
        OutcomeCommitter(client: client, eventsExchange: exchange, maxBatch: 16, timeout: .seconds(15),
                         metrics: RunnerMetrics(queue: "sms"), logger: logger)
    }

    private func statuses(_ ids: [String], harness: Harness) async throws -> [String: String] {
        try await statuses(ids, client: harness.database, logger: harness.logger)
    }

    private func statuses(_ ids: [String], client: PostgresClient, logger: Logger) async throws -> [String: String] {
        var result: [String: String] = [:]
        let rows = try await client.query("SELECT message_id, status, coalesce(reason, '') FROM herald.job_runs WHERE message_id = ANY(\(ids)::text[])", logger: logger)
        for try await (id, status, reason) in rows.decode((String, String, String).self) { result[id] = reason.isEmpty ? status : "\(status): \(reason)" }
        return result
    }

    private func events(_ exchange: String, harness: Harness) async throws -> [String] {
        try await events(exchange, client: harness.database, logger: harness.logger)
    }

    private func events(_ exchange: String, client: PostgresClient, logger: Logger) async throws -> [String] {
        var names: [String] = []
        let rows = try await client.query("SELECT name || ' ' || body FROM herald.event_outbox WHERE exchange = \(exchange) ORDER BY id", logger: logger)
        for try await line in rows.decode(String.self) { names.append(line) }
        try await client.query("DELETE FROM herald.event_outbox WHERE exchange = \(exchange)", logger: logger)
        return names
    }

    @Test func aGroupWithoutWritesRecordsEveryOutcomeAndEveryEvent() async throws {
        try await withHarness { harness in
            let exchange = "test-outcomes-\(UUID().uuidString)"
            let committer = committer(harness.database, logger: harness.logger, exchange: exchange)
            let ids = try await claimed(6, harness: harness)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (n, id) in ids.enumerated() {
                    let finished = JobLedger.Finished(messageID: id, status: n % 3 == 0 ? .rejected : .completed, reason: n % 3 == 0 ? "policy" : nil)
                    // Some jobs have two events, some none.
                    let events = (0..<(n % 3)).map { OutgoingEvent(name: "test.outcome", payload: Payload(n: n * 10 + $0)) }
                    group.addTask { try await committer.commit(finished, events: events, write: nil) }
                }
                try await group.waitForAll()
            }
            let recorded = try await statuses(ids, harness: harness)
            for (n, id) in ids.enumerated() { #expect(recorded[id] == (n % 3 == 0 ? "rejected: policy" : "completed")) }
            let bodies = try await events(exchange, harness: harness)
            #expect(bodies.count == 6)
            for n in 0..<6 { for e in 0..<(n % 3) { #expect(bodies.contains { $0.contains("\"n\":\(n * 10 + e)") }) } }
        }
    }

    /// Runs `body` while PostgreSQL refuses, at insert time, every event named `name` (a row
    /// trigger on the outbox that only that name fires), and removes the trigger whatever happens.
    /// On a database of its own: a trigger made or dropped on the shared, partitioned outbox locks
    /// every day of it, and held up the parallel suites' inserts past their deadlines.
    private func refusingEvents<T>(named name: String, client: PostgresClient, logger: Logger, _ body: () async throws -> T) async throws -> T {
        let suffix = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let function = "public.herald_test_refuse_\(suffix)"
        let trigger = "herald_test_refuse_\(suffix)"
        try await client.query(PostgresQuery(unsafeSQL: """
            CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'check_violation'; END $$
            """), logger: logger)
        func drop() async throws {
            try await client.query(PostgresQuery(unsafeSQL: "DROP TRIGGER IF EXISTS \(trigger) ON herald.event_outbox"), logger: logger)
            try await client.query(PostgresQuery(unsafeSQL: "DROP FUNCTION IF EXISTS \(function)()"), logger: logger)
        }
        do {
            try await client.query(PostgresQuery(unsafeSQL: """
                CREATE TRIGGER \(trigger) BEFORE INSERT ON herald.event_outbox FOR EACH ROW
                WHEN (NEW.name = '\(name)') EXECUTE FUNCTION \(function)()
                """), logger: logger)
            let result = try await body()
            try await drop()
            return result
        } catch {
            try? await drop()
            throw error
        }
    }

    @Test func anEventPostgreSQLRefusesLeavesItsOutcomeUnrecorded() async throws {
        try await withScratchDatabase("outcomes") { _, client in
            let logger = TestEnvironment.logger("test.outcomes")
            _ = try await Migrator(client: client, groups: HeraldFleet.schema, logger: logger).migrate()
            let exchange = "test-outcomes-\(UUID().uuidString)"
            let refusedName = "test.refused.\(UUID().uuidString.lowercased())"
            let committer = committer(client, logger: logger, exchange: exchange)
            let ids = try await claimed(2, client: client, logger: logger)
            try await refusingEvents(named: refusedName, client: client, logger: logger) {
                let refused = OutgoingEvent(name: refusedName, payload: Payload(n: 1))
                let good = OutgoingEvent(name: "test.outcome", payload: Payload(n: 2))
                // As one group (then each alone) or one by one: either way the same answers.
                let first = Task { try await committer.commit(.init(messageID: ids[0], status: .completed, reason: nil), events: [refused], write: nil) }
                let second = Task { try await committer.commit(.init(messageID: ids[1], status: .completed, reason: nil), events: [good], write: nil) }
                let error = await #expect(throws: PSQLError.self) { try await first.value }
                // Refused while the statement ran (not while binding): its outcome update is undone with it.
                #expect(error.flatMap(Database.sqlState(of:)) == "23514")
                try await second.value
            }
            let recorded = try await statuses(ids, client: client, logger: logger)
            #expect(recorded[ids[0]] == "running")
            #expect(recorded[ids[1]] == "completed")
            #expect(try await events(exchange, client: client, logger: logger).map { $0.contains("\"n\":2") } == [true])
        }
    }
}
