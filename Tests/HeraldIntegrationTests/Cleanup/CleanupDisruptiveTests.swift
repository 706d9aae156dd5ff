import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

/// Cleanup workers killed mid-run. Runs alone with the other disruptive suites.
@Suite(.needsServers, .disruptive, .serialized) struct CleanupDisruptiveTests {
    /// Two `herald-cleanup` processes share a run; both are SIGKILLed mid-run; a new worker
    /// takes the run's jobs over and the run converges: every eligible account deleted, the
    /// others kept, exactly one `account.deleted` event per deleted account.
    @Test func killedWorkersMidRunThenTheRunConvergesWithCompleteEvents() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let eligible = 8_000
        try await db.insertEligible(eligible, prefix: "kill")
        let kept = (0..<100).map { GeneratedAccount(id: "kill-young-\($0)", ageDays: 1.5, anonymous: true, linked: false) }
        try await db.insert(kept)

        try await withHarness() { harness in
            let events = try await DeletedEventsQueue(harness: harness)
            let environment = [
                "HERALD_DATABASE_URL": CleanupDatabase.url,
                "HERALD_CLEANUP_BATCH_SIZE": "100",
                "HERALD_CLEANUP_RATE_LIMIT_PER_SECOND": "1000",
            ]
            let first = try WorkerProcess("herald-cleanup", namespace: harness.namespace, environment: environment)
            let second = try WorkerProcess("herald-cleanup", namespace: harness.namespace, environment: environment)
            try await first.waitUntilReady()
            try await second.waitUntilReady()
            var configuration = CleanupConfiguration()
            configuration.fanOut = 2
            let result = try await CleanupScheduler(client: db.client, configuration: configuration, logger: db.logger).schedule { job, id in
                _ = try await harness.enqueue(job, messageID: id)
            }
            let runID = result.run.id
            try await eventually(timeout: .seconds(30), "run under way") { (try await db.runs.get(runID)?.accountsDeleted ?? 0) >= 1_500 }
            first.signal(SIGKILL)
            second.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5)) != nil)
            #expect(await second.waitForExit(timeout: .seconds(5)) != nil)
            let midway = try #require(try await db.runs.get(runID))
            #expect(midway.status == .running && midway.accountsDeleted < eligible, "killed mid-run (\(midway.accountsDeleted))")
            // Whatever was deleted has its event committed with it.
            let deletedSoFar = eligible - (try await db.accountIDs().count - kept.count)
            #expect(deletedSoFar == midway.accountsDeleted)

            let third = try WorkerProcess("herald-cleanup", namespace: harness.namespace, environment: [
                "HERALD_DATABASE_URL": CleanupDatabase.url, "HERALD_CLEANUP_BATCH_SIZE": "500", "HERALD_CLEANUP_RATE_LIMIT_PER_SECOND": "0",
            ])
            try await eventually(timeout: .seconds(60), "run completed after the takeover") { try await db.runs.get(runID)?.status == .completed }
            #expect(try await db.accountIDs() == Set(kept.map(\.id)))
            let received = try await events.collect(atLeast: eligible)
            // A relay killed between the broker's confirm and its commit publishes those events
            // again with the same message_id (at least once): count distinct events.
            let distinct = Dictionary(grouping: received, by: \.messageID)
            #expect(distinct.count == eligible, "one event per deleted account (\(received.count - distinct.count) redeliveries)")
            #expect(distinct.values.allSatisfy { Set($0.map(\.accountID)).count == 1 })
            let accounts = distinct.values.map { $0[0].accountID }
            #expect(accounts.count == Set(accounts).count, "no account has two different events")
            #expect(Set(accounts) == Set((1...eligible).map { "kill-\($0)" }))
            let run = try #require(try await db.runs.get(runID))
            #expect(run.accountsDeleted == eligible)
            third.signal(SIGTERM)
            #expect(await third.waitForExit(timeout: .seconds(30)) == 0, "log:\n\(third.log.suffix(1500))")
            await events.delete()
        }
    }
}
