import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// Cleanup against the real PostgreSQL (its own database, see ``CleanupDatabase``) and
/// RabbitMQ. Serialized: the policy row and the one active run are global to the database.
@Suite(.needsServers, .serialized) struct CleanupTests {
    /// Exactly the eligible accounts go, whatever the mix of ages, anonymity, links, enabling
    /// time and retention; one `account.deleted` each; the dry run predicted the count.
    @Test(arguments: 1...6) func exactlyTheEligibleAccountsAreDeleted(seed: Int) async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        var rng = SeededGenerator(seed: UInt64(seed))
        let enabledDaysAgo = Double(Int.random(in: 0...60, using: &rng)) + 0.5
        let initialRetention = Double(Int.random(in: 1...45, using: &rng))
        // Now and then the retention changes after the accounts were judged under the first one.
        let retention = Bool.random(using: &rng) ? initialRetention : Double(Int.random(in: 1...45, using: &rng))
        var accounts: [GeneratedAccount] = []
        for n in 0..<300 {
            // Whole days plus half a day: never within hours of a boundary.
            let age = Double(Int.random(in: 0...120, using: &rng)) + 0.5
            let anonymous = Int.random(in: 0..<10, using: &rng) < 7
            let linked = Int.random(in: 0..<10, using: &rng) < 3
            accounts.append(GeneratedAccount(id: "p\(seed)-\(n)", ageDays: age, anonymous: anonymous, linked: linked))
        }
        try await db.insert(accounts)
        try await db.enable(sinceDaysAgo: enabledDaysAgo, retentionDays: initialRetention)
        if retention != initialRetention {
            try await CleanupPolicyStore(client: db.client, logger: db.logger).setRetention(days: Int(retention))
        }
        let expectedGone = Set(accounts.filter { $0.eligible(enabledDaysAgo: enabledDaysAgo, retentionDays: retention) }.map(\.id))
        let expectedKept = Set(accounts.map(\.id)).subtracting(expectedGone)

        var configuration = CleanupConfiguration()
        configuration.batchSize = 17
        configuration.rateLimitPerSecond = 0
        let report = try await CleanupReport.make(client: db.client, configuration: configuration, logger: db.logger)
        #expect(report.eligible == expectedGone.count)
        #expect(try await db.accountIDs() == Set(accounts.map(\.id)), "the dry run deleted nothing")

        let exchange = "tcleanup\(seed).events"
        let runID = "prop-\(seed)-\(UUID().uuidString.prefix(6))"
        let outcome = try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: exchange)
        #expect(outcome.status == .completed)
        #expect(try await db.accountIDs() == expectedKept)
        let events = try await db.outboxAccountIDs(exchange: exchange)
        #expect(events.count == expectedGone.count)
        #expect(Set(events) == expectedGone)
        let run = try #require(try await db.runs.get(runID))
        #expect(run.status == .completed)
        #expect(run.accountsDeleted == expectedGone.count)
        #expect(run.eligibleAtStart == expectedGone.count)
        try await db.dropOutbox(exchange: exchange)
    }

    @Test func aDryRunRecordsWhatWouldGoAndDeletesNothing() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        try await db.insertEligible(25, prefix: "dry")
        let runID = "dry-\(UUID().uuidString.prefix(6))"
        let outcome = try await db.handle(CleanupRunJob(runID: runID, dryRun: true), configuration: .init(), exchange: "tdry.events")
        #expect(outcome.status == .completed)
        #expect(try await db.accountIDs().count == 25)
        let run = try #require(try await db.runs.get(runID))
        #expect(run.dryRun && run.status == .completed && run.eligibleAtStart == 25 && run.accountsDeleted == 0)
        #expect(try await db.outboxAccountIDs(exchange: "tdry.events").isEmpty)
    }

    /// Cleanup never enabled: no account has a date, so a run (which is no longer refused
    /// while cleanup is off: dates given before stay due) deletes none, however old.
    @Test func aRunWithCleanupNeverEnabledDeletesNoAccount() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.insertEligible(10, prefix: "off")
        let runID = "off-\(UUID().uuidString.prefix(6))"
        let outcome = try await db.handle(CleanupRunJob(runID: runID), configuration: .init(), exchange: "toff.events")
        #expect(outcome.status == .completed)
        #expect(try await db.accountIDs().count == 10)
        let run = try #require(try await db.runs.get(runID))
        #expect(run.status == .completed && run.accountsDeleted == 0)
    }

    @Test func cancellingMidRunStopsItAfterItsBatchAndEveryDeletionHasItsEvent() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        try await db.insertEligible(3_000, prefix: "stop")
        var configuration = CleanupConfiguration()
        configuration.batchSize = 50
        configuration.rateLimitPerSecond = 1_000
        let runID = "stop-\(UUID().uuidString.prefix(6))"
        let running = Task { try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: "tstop.events") }
        try await eventually("run under way") { (try await db.runs.get(runID)?.accountsDeleted ?? 0) >= 200 }
        let cancelled = try await db.runs.cancelActive(reason: "test cancel")
        #expect(cancelled?.id == runID)
        #expect(try await running.value.status == .completed)
        let run = try #require(try await db.runs.get(runID))
        #expect(run.status == .cancelled && run.reason == "test cancel")
        let left = try await db.accountIDs().count
        #expect(left > 0, "stopped before the end")
        #expect(run.accountsDeleted == 3_000 - left)
        #expect(try await db.outboxAccountIDs(exchange: "tstop.events").count == run.accountsDeleted)
        try await db.dropOutbox(exchange: "tstop.events")
    }

    @Test func enablingStartsTheGracePeriodForAccountsThatExistedBefore() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.insertEligible(10, prefix: "old")
        let policy = try await CleanupPolicyStore(client: db.client, logger: db.logger).enable(retentionDays: 30)
        #expect(policy.enabled && policy.enabledAt != nil)
        var report = try await CleanupReport.make(client: db.client, configuration: .init(), logger: db.logger)
        #expect(report.eligible == 0, "40-day-old accounts wait 30 days from enabling")
        // Enabling again keeps the enabling time.
        let again = try await CleanupPolicyStore(client: db.client, logger: db.logger).enable(retentionDays: 10)
        #expect(again.enabledAt == policy.enabledAt && again.retentionSeconds == 10 * 86_400)
        // 31 days later (moved back instead of waiting) they are eligible.
        try await db.client.query("UPDATE herald.cleanup_policy SET enabled_at = enabled_at - interval '31 days'", logger: db.logger)
        report = try await CleanupReport.make(client: db.client, configuration: .init(), logger: db.logger)
        #expect(report.eligible == 10)
    }

    @Test func theCapStopsARunAndTheNextRunGoesOn() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        try await db.insertEligible(250, prefix: "cap")
        var configuration = CleanupConfiguration()
        configuration.batchSize = 40
        configuration.maxAccountsPerRun = 100
        let first = "cap1-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: first), configuration: configuration, exchange: "tcap.events")
        #expect(try await db.accountIDs().count == 150)
        let run = try #require(try await db.runs.get(first))
        #expect(run.status == .completed && run.accountsDeleted == 100)
        #expect(run.reason?.contains("cap") == true)
        let second = "cap2-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: second), configuration: configuration, exchange: "tcap.events")
        #expect(try await db.accountIDs().count == 50)
        #expect(try await db.outboxAccountIDs(exchange: "tcap.events").count == 200)
        try await db.dropOutbox(exchange: "tcap.events")
    }

    @Test func expiredRowsOfThePurgeTargetsGoFreshOnesStay() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let tag = "purge-\(UUID().uuidString.prefix(6))"
        // This suite's database, if migrated before issue 33, keeps its old ledger rows in a legacy
        // partition that covers every day up to the migration's: rows written in those days would
        // go there, out of reach of a day's drop for a week. Test rows only: dropped.
        try await db.client.query("DROP TABLE IF EXISTS herald.job_runs_legacy", logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.job_runs (message_id, job_type, queue, status, created_at, finished_at)
            SELECT \(tag) || '-' || g, 'x.v1', 'x', 'completed', now() - make_interval(days => g * 3), now() - make_interval(days => g * 3)
              FROM generate_series(1, 6) g
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.job_runs (message_id, job_type, queue, status, created_at) VALUES (\(tag) || '-running', 'x.v1', 'x', 'running', now() - interval '30 days')
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.dev_outbox (kind, message_id, job_type, recipient, body, created_at)
            SELECT 'sms', \(tag) || '-' || g, 'x.v1', '-', '{}', now() - make_interval(days => g * 3) FROM generate_series(1, 6) g
            """, logger: db.logger)
        // Kept: 3 and 6 days old (< 7), and the unfinished job (the ledger is dropped by day:
        // its day goes, the job moves on to today).
        let runID = "purge-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: runID), configuration: .init(), exchange: "tpurge.events")
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.job_runs WHERE message_id LIKE '\(tag)%'") == 3)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.dev_outbox WHERE message_id LIKE '\(tag)%'") == 2)
        let run = try #require(try await db.runs.get(runID))
        #expect((run.purged["job_runs"] ?? 0) >= 4 && (run.purged["dev_outbox"] ?? 0) >= 4)
    }

    /// The tables nothing purged before issue 31 (the SMS app evidence went 1 in 100 on the
    /// send path; Apple's notifications and relay markings never): each run purges their rows
    /// older than the defaults (2, 60 and 365 days) and keeps the recent ones.
    @Test func oldAppEvidenceFraudBucketsAppleNotificationsRelayMarkingsAndVerifyVerificationsArePurged() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        let tag = "purge31-\(UUID().uuidString.prefix(6))"
        try await db.client.query("""
            INSERT INTO herald.sms_app_verifications (verification_id, phone_number, method, detail, created_at)
            SELECT \(tag) || '-' || d, '+15550100', 'receipt', 'app', now() - make_interval(days => d) FROM unnest(ARRAY[0, 1, 3, 10]) d
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.apple_notifications (jti, message_id, client_id, type, issued_at, event_time, received_at)
            SELECT \(tag) || '-' || d, \(tag), 'app', 'email-enabled', now() - make_interval(days => d), now() - make_interval(days => d),
                   now() - make_interval(days => d)
              FROM unnest(ARRAY[0, 45, 61, 400]) d
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.apple_relay_addresses (address_hash, key_id, deliverable, event_time, updated_at)
            SELECT convert_to(\(tag) || '-' || d, 'UTF8'), \(tag), d % 2 = 0, now() - make_interval(days => d), now() - make_interval(days => d)
              FROM unnest(ARRAY[0, 200, 366, 800]) d
            """, logger: db.logger)
        // The fraud guard's buckets and marks (2 days by default), which its check deleted now and then before.
        try await db.client.query("""
            INSERT INTO herald.sms_fraud_counts (scope, key, minute, sent)
            SELECT 'prefix', \(tag), date_trunc('minute', now()) - make_interval(days => d), 1 FROM unnest(ARRAY[0, 1, 3, 10]) d
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix, created_at)
            SELECT \(tag) || '-' || d, '+15550100', 'US', \(tag), now() - make_interval(days => d) FROM unnest(ARRAY[0, 1, 3, 10]) d
            """, logger: db.logger)
        // herald-api's Verify verifications (30 days, once ended): a pending one within its validity stays however old its last change.
        try await db.client.query("""
            INSERT INTO herald.verify_services (sid, friendly_name, code_length, ttl_seconds, max_send_attempts, max_check_attempts)
            VALUES ('VA' || md5(\(tag)), \(tag), 6, 600, 5, 5)
            """, logger: db.logger)
        try await db.client.query("""
            INSERT INTO herald.verify_verifications (sid, service_sid, to_number, channel, status, updated_at, expires_at)
            SELECT 'VE' || md5(\(tag) || s || d), 'VA' || md5(\(tag)), '+1555010' || d, 'sms', s, now() - make_interval(days => d),
                   CASE WHEN s = 'pending' THEN now() + interval '1 hour' ELSE now() - make_interval(days => d) END
              FROM unnest(ARRAY[0, 29, 31, 90]) d, unnest(ARRAY['approved', 'pending']) s
            """, logger: db.logger)
        let runID = "purge31-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: runID), configuration: .init(), exchange: "tpurge31.events")
        let verifications = "SELECT count(*)::bigint FROM herald.verify_verifications WHERE service_sid = 'VA' || md5('\(tag)') AND status ="
        #expect(try await db.count(verifications + " 'approved' AND updated_at > now() - interval '30 days'") == 2)
        #expect(try await db.count(verifications + " 'approved'") == 2)
        #expect(try await db.count(verifications + " 'pending'") == 4)
        try await db.client.query("DELETE FROM herald.verify_services WHERE friendly_name = \(tag)", logger: db.logger)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.sms_fraud_counts WHERE key = '\(tag)'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.sms_fraud_marks WHERE prefix = '\(tag)' AND created_at > now() - interval '2 days'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.sms_fraud_marks WHERE prefix = '\(tag)'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.sms_app_verifications WHERE verification_id LIKE '\(tag)%'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.apple_notifications WHERE message_id = '\(tag)'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.apple_relay_addresses WHERE key_id = '\(tag)'") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.sms_app_verifications WHERE verification_id IN ('\(tag)-0', '\(tag)-1')") == 2)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.apple_notifications WHERE jti IN ('\(tag)-0', '\(tag)-45')") == 2)
        let run = try #require(try await db.runs.get(runID))
        for target in ["sms_app_verifications", "apple_notifications", "apple_relay_addresses", "sms_fraud_counts", "sms_fraud_marks", "verify_verifications"] {
            #expect((run.purged[target] ?? 0) >= 2, "\(target): \(run.purged)")
        }
    }

    @Test func aSecondScheduleWhileARunIsActiveStartsNoDuplicateAndAStaleRunIsResumed() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        var configuration = CleanupConfiguration()
        configuration.fanOut = 3
        let scheduler = CleanupScheduler(client: db.client, configuration: configuration, logger: db.logger)
        let published = PublishedJobs()
        // Scheduled whether cleanup is on or off (off, a run deletes only kept dates that are due).
        #expect(try await CleanupPolicyStore(client: db.client, logger: db.logger).load().enabled == false)
        let first = try await scheduler.schedule(publish: published.record)
        guard case .scheduled(let run) = first else { Issue.record("not scheduled: \(first)"); return }
        #expect(published.ids == ["\(run.id).1", "\(run.id).2", "\(run.id).3"])
        let second = try await scheduler.schedule(publish: published.record)
        #expect(second == .alreadyActive(run))
        #expect(published.ids.count == 3)
        // Concurrent schedules: still one active run.
        async let a = scheduler.schedule(publish: published.record)
        async let b = scheduler.schedule(publish: published.record)
        _ = try await (a, b)
        #expect(try await db.count("SELECT count(*)::bigint FROM herald.cleanup_runs WHERE status IN ('scheduled','running') AND NOT dry_run") == 1)
        // A dry run does not conflict.
        guard case .scheduled = try await scheduler.schedule(dryRun: true, publish: published.record) else { Issue.record("dry run refused"); return }
        // No progress for longer than stale_after_seconds: resumed with the same run id.
        try await db.client.query("UPDATE herald.cleanup_runs SET heartbeat_at = now() - interval '1 hour' WHERE id = \(run.id)", logger: db.logger)
        guard case .resumed(let resumed) = try await scheduler.schedule(publish: published.record) else { Issue.record("not resumed"); return }
        #expect(resumed.id == run.id)
        #expect(published.ids.suffix(3).allSatisfy { $0.hasPrefix(run.id + ".r") })
    }

    /// Several workers (real runners, real broker) share one run: nothing deleted twice,
    /// nothing missed, one `account.deleted` on `herald.events` per account.
    @Test func severalWorkersShareOneRun() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let eligible = 2_000
        try await db.insertEligible(eligible, prefix: "multi")
        let kept = (0..<50).map { GeneratedAccount(id: "multi-young-\($0)", ageDays: 3.5, anonymous: true, linked: false) }
            + (0..<50).map { GeneratedAccount(id: "multi-linked-\($0)", ageDays: 90.5, anonymous: true, linked: true) }
        try await db.insert(kept)

        try await withHarness() { harness in
            let events = try await DeletedEventsQueue(harness: harness)
            let configuration = db.configuration(namespace: harness.namespace)
            var cleanup = configuration.cleanup
            cleanup.batchSize = 50
            cleanup.rateLimitPerSecond = 0
            cleanup.fanOut = 4
            var workers: [RunningWorker] = []
            for _ in 0..<3 {
                workers.append(try await harness.startRunner(.cleanup, CleanupHandler(configuration: cleanup, eventsExchange: harness.topology.eventsExchange)) {
                    $0.database = configuration.database
                })
            }
            let result = try await CleanupScheduler(client: db.client, configuration: cleanup, logger: db.logger).schedule { job, id in
                _ = try await harness.enqueue(job, messageID: id)
            }
            let runID = result.run.id
            try await eventually(timeout: .seconds(60), "run completed") { try await db.runs.get(runID)?.status == .completed }
            let received = try await events.collect(atLeast: eligible)
            #expect(try await db.accountIDs() == Set(kept.map(\.id)))
            #expect(received.count == eligible, "one event per account, none twice")
            #expect(Set(received.map(\.accountID)) == Set((1...eligible).map { "multi-\($0)" }))
            #expect(Set(received.map(\.messageID)).count == eligible)
            let run = try #require(try await db.runs.get(runID))
            #expect(run.accountsDeleted == eligible)
            #expect(run.joins >= 4, "each of the 4 jobs joined the run")
            for worker in workers { try await worker.stop() }
            await events.delete()
        }
    }

    /// Sign-ins (updates of accounts, eligible ones included) during a run wait at most for a
    /// batch, never for the run: each completes while the run is still going, with its lock
    /// wait bounded by `lock_timeout`, which is far below the run's length.
    @Test func signInsDuringARunAreNotBlockedForLongerThanABatch() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        let eligible = 6_000
        try await db.insertEligible(eligible, prefix: "busy")
        try await db.insert((0..<200).map { GeneratedAccount(id: "busy-member-\($0)", ageDays: 100.5, anonymous: false, linked: true) })
        var configuration = CleanupConfiguration()
        configuration.batchSize = 100
        configuration.rateLimitPerSecond = 1_500 // about 4 s for the run: much longer than a batch
        let runID = "busy-\(UUID().uuidString.prefix(6))"
        let running = Task { try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: "tbusy.events") }
        try await eventually("run started") { (try await db.runs.get(runID)?.accountsDeleted ?? 0) > 0 }

        let accounts = AccountStore(client: db.client, logger: db.logger)
        var latencies: [Duration] = []
        var updates = 0
        // Sign-ins that completed with the run still going: how many does not depend on the
        // machine's speed (under load the run can end before the loop's 400).
        var duringRun = 0
        while (try await db.runs.get(runID))?.status == .running && updates < 400 {
            // Alternately an account the run is deleting (maybe locked by the batch right now)
            // and one it never touches.
            let id = updates % 2 == 0 ? "busy-\(Int.random(in: 1...eligible))" : "busy-member-\(Int.random(in: 0..<200))"
            let started = ContinuousClock.now
            try await db.client.withTransaction(logger: db.logger) { connection in
                try await connection.query("SET LOCAL lock_timeout = '1500ms'", logger: db.logger)
                try await connection.query("UPDATE herald.accounts SET last_sign_in_at = now() WHERE id = \(id)", logger: db.logger)
            }
            latencies.append(.now - started)
            updates += 1
            if (try await db.runs.get(runID))?.status == .running { duringRun += 1 }
            _ = try await accounts.recordSignIn(accountID: "busy-member-\(updates % 200)")
        }
        _ = try await running.value
        #expect(duringRun >= 20, "sign-ins went on while the run ran: \(duringRun) of \(updates)")
        // Each sign-in ran under lock_timeout 1500ms, so one kept waiting on the run's locks
        // failed the test with 55P03; how long they took is a benchmark's figure (make bench).
        print("CleanupTests: \(updates) sign-ins during the run, worst \(latencies.max() ?? .zero)")
        #expect(try await db.accountIDs().count == 200)
        try await db.dropOutbox(exchange: "tbusy.events")
    }

    @Test func linkingAnAnonymousAccountUpgradesItForGood() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        let accounts = AccountStore(client: db.client, logger: db.logger)
        #expect(try await accounts.createAnonymousAccount(id: "link-1"))
        #expect(try await !accounts.createAnonymousAccount(id: "link-1"))
        #expect(try await accounts.account("link-1")?.isAnonymous == true)
        #expect(try await accounts.linkProvider(accountID: "link-1", provider: "apple.com", providerUID: "a-1"))
        let account = try #require(try await accounts.account("link-1"))
        #expect(!account.isAnonymous && account.providers == ["apple.com"])
        #expect(try await !accounts.linkProvider(accountID: "gone", provider: "apple.com", providerUID: "a-2"))
        #expect(try await accounts.recordSignIn(accountID: "link-1"))
        // Old and upgraded: never eligible.
        try await db.client.query("UPDATE herald.accounts SET created_at = now() - interval '400 days'", logger: db.logger)
        try await db.enable(sinceDaysAgo: 400, retentionDays: 1)
        #expect(try await CleanupReport.make(client: db.client, configuration: .init(), logger: db.logger).eligible == 0)
    }
}

/// Message ids a ``CleanupScheduler`` published.
final class PublishedJobs: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    var ids: [String] { lock.withLock { recorded } }
    var record: CleanupScheduler.Publish {
        { _, id in self.lock.withLock { self.recorded.append(id) } }
    }
}

/// A deterministic generator, so a failing seed can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
