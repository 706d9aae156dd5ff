import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// Deletion dates as Firebase documents them: given while cleanup is enabled (creation +
/// retention, or enabling + retention for accounts that existed before), kept when it is
/// switched off and deleted by runs when due, never moved by a later enable, removed for good
/// by a link. Several accounts on each side of every boundary; the boundaries are an hour
/// away from now, so the time a test takes never decides it. In ``CleanupTests`` (serialized:
/// the policy row and the one active run are global to the database).
extension CleanupTests {
    static let hour = 1.0 / 24

    /// Around the due instant, for accounts created after and before enabling: due an hour
    /// ago goes, due in an hour stays; linked and provider accounts stay whatever their age.
    @Test(arguments: [40, 30 + CleanupTests.hour, 30 - CleanupTests.hour])
    func computedDatesAroundTheDueInstant(enabledDaysAgo: Double) async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        let retention = 30.0
        // Ages across both boundaries: creation + retention (created after enabling) and
        // enabling + retention (created before it).
        let ages = [29 - CleanupTests.hour, 30 - 2 * CleanupTests.hour, 30 - CleanupTests.hour, 30 + CleanupTests.hour,
                    30 + 2 * CleanupTests.hour, 31, 45, 200]
        var accounts: [GeneratedAccount] = []
        for (n, age) in ages.enumerated() {
            for copy in 0..<3 { accounts.append(GeneratedAccount(id: "edge-\(n)-\(copy)", ageDays: age, anonymous: true, linked: false)) }
            accounts.append(GeneratedAccount(id: "edge-\(n)-linked", ageDays: age, anonymous: true, linked: true))
            accounts.append(GeneratedAccount(id: "edge-\(n)-member", ageDays: age, anonymous: false, linked: true))
        }
        try await db.insert(accounts)
        try await db.enable(sinceDaysAgo: enabledDaysAgo, retentionDays: retention)
        let expectedGone = Set(accounts.filter { $0.eligible(enabledDaysAgo: enabledDaysAgo, retentionDays: retention) }.map(\.id))
        // Both sides of the boundary are populated (enabled less than a retention ago: none is due yet).
        #expect(expectedGone.isEmpty == (enabledDaysAgo < retention))
        #expect(expectedGone.count < accounts.filter { $0.anonymous && !$0.linked }.count)

        // Each account's date is the rule's: greatest(created, enabled) + retention, none when linked.
        let store = AccountStore(client: db.client, logger: db.logger)
        let policy = try await CleanupPolicyStore(client: db.client, logger: db.logger).load()
        let enabledAt = try #require(policy.enabledAt)
        for account in accounts {
            let stored = try #require(try await store.account(account.id))
            if account.anonymous && !account.linked {
                let due = try #require(stored.deletionDate, "\(account.id) has a date")
                let expected = max(stored.createdAt, enabledAt).addingTimeInterval(retention * 86_400)
                #expect(abs(due.timeIntervalSince(expected)) < 0.001, "\(account.id)")
                #expect(!stored.deletionDateKept)
            } else {
                #expect(stored.deletionDate == nil, "\(account.id) has no date")
            }
        }

        let runID = "edge-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: runID), configuration: .init(), exchange: "tedge.events")
        #expect(try await db.accountIDs() == Set(accounts.map(\.id)).subtracting(expectedGone))
        #expect(Set(try await db.outboxAccountIDs(exchange: "tedge.events")) == expectedGone)
        try await db.dropOutbox(exchange: "tedge.events")
    }

    /// Disable keeps every date given, for accounts created before and after enabling; it
    /// gives none to accounts created after it; a run while disabled deletes exactly the kept
    /// dates that are due (through the real worker and broker, events included).
    @Test func disablingKeepsTheDatesAndRunsWhileDisabledDeleteThemWhenDue() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 10, retentionDays: 30)
        // Before enabling: due 20 days from now. After enabling: due 30 days after creation.
        let before = (0..<4).map { GeneratedAccount(id: "keep-before-\($0)", ageDays: 100, anonymous: true, linked: false) }
        let after = (0..<4).map { GeneratedAccount(id: "keep-after-\($0)", ageDays: 5, anonymous: true, linked: false) }
        let linked = (0..<2).map { GeneratedAccount(id: "keep-linked-\($0)", ageDays: 100, anonymous: true, linked: true) }
        try await db.insert(before + after + linked)
        let store = AccountStore(client: db.client, logger: db.logger)
        let computed = try await db.deletionDates(store, ids: (before + after).map(\.id))

        let policy = try await CleanupPolicyStore(client: db.client, logger: db.logger).disable()
        #expect(!policy.enabled)
        #expect(try await CleanupPolicyStore(client: db.client, logger: db.logger).keptDates() == 8)
        for account in before + after {
            let stored = try #require(try await store.account(account.id))
            #expect(stored.deletionDateKept && stored.deletionDate == computed[account.id], "\(account.id) keeps its date")
        }
        for account in linked { #expect(try await store.account(account.id)?.deletionDate == nil) }
        // Created while disabled: no date, however long it waits.
        for n in 0..<3 { #expect(try await store.createAnonymousAccount(id: "keep-off-\(n)")) }
        for n in 0..<3 { #expect(try await store.account("keep-off-\(n)")?.deletionDate == nil) }

        // 20 days and an hour pass: the "before" ones are due an hour ago, the "after" ones in
        // 5 days less an hour, the ones created while disabled still have no date.
        try await db.travel(days: 20 + CleanupTests.hour)
        for n in 0..<3 { #expect(try await store.account("keep-off-\(n)")?.deletionDate == nil) }
        let all = Set((before + after + linked).map(\.id)).union((0..<3).map { "keep-off-\($0)" })
        try await withHarness() { harness in
            let events = try await DeletedEventsQueue(harness: harness)
            let configuration = db.configuration(namespace: harness.namespace)
            let worker = try await harness.startRunner(.cleanup, CleanupHandler(configuration: configuration.cleanup, eventsExchange: harness.topology.eventsExchange)) {
                $0.database = configuration.database
            }
            let result = try await CleanupScheduler(client: db.client, configuration: configuration.cleanup, logger: db.logger).schedule { job, id in
                _ = try await harness.enqueue(job, messageID: id)
            }
            guard case .scheduled(let run) = result else { Issue.record("not scheduled while disabled: \(result)"); return }
            try await eventually(timeout: .seconds(60), "run completed") { try await db.runs.get(run.id)?.status == .completed }
            let received = try await events.collect(atLeast: before.count)
            #expect(Set(received.map(\.accountID)) == Set(before.map(\.id)) && received.count == before.count)
            #expect(try await db.accountIDs() == all.subtracting(before.map(\.id)))
            #expect(try await db.runs.get(run.id)?.accountsDeleted == before.count)
            try await worker.stop()
            await events.delete()
        }
    }

    /// Disabling during a run does not stop it: the dates it was deleting by are kept.
    @Test func disablingMidRunLetsTheRunFinishTheDueAccounts() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        try await db.insertEligible(2_000, prefix: "mid")
        let young = (0..<20).map { GeneratedAccount(id: "mid-young-\($0)", ageDays: 3, anonymous: true, linked: false) }
        try await db.insert(young)
        var configuration = CleanupConfiguration()
        configuration.batchSize = 50
        configuration.rateLimitPerSecond = 1_000
        let runID = "mid-\(UUID().uuidString.prefix(6))"
        let running = Task { try await db.handle(CleanupRunJob(runID: runID), configuration: configuration, exchange: "tmid.events") }
        try await eventually("run under way") { (try await db.runs.get(runID)?.accountsDeleted ?? 0) >= 200 }
        try await CleanupPolicyStore(client: db.client, logger: db.logger).disable()
        #expect(try await running.value.status == .completed)
        let run = try #require(try await db.runs.get(runID))
        #expect(run.status == .completed && run.accountsDeleted == 2_000)
        #expect(try await db.accountIDs() == Set(young.map(\.id)), "the young keep their (future) dates")
        #expect(try await CleanupPolicyStore(client: db.client, logger: db.logger).keptDates() == young.count)
        #expect(try await db.outboxAccountIDs(exchange: "tmid.events").count == 2_000)
        try await db.dropOutbox(exchange: "tmid.events")
    }

    /// Enabling again (and changing the retention) never moves a kept date; accounts without
    /// one count from the new enabling time with the new retention.
    @Test func reEnablingDoesNotRestartTheDatesAlreadyGiven() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 10, retentionDays: 30)
        let dated = (0..<3).map { GeneratedAccount(id: "re-dated-\($0)", ageDays: 100, anonymous: true, linked: false) }
        try await db.insert(dated)
        let policies = CleanupPolicyStore(client: db.client, logger: db.logger)
        try await policies.disable()
        let store = AccountStore(client: db.client, logger: db.logger)
        let kept = try await db.deletionDates(store, ids: dated.map(\.id))
        // Created while disabled (existed before the next enabling).
        let undated = (0..<3).map { GeneratedAccount(id: "re-undated-\($0)", ageDays: 0, anonymous: true, linked: false) }
        try await db.insert(undated)

        let enabled = try await policies.enable(retentionDays: 7)
        let enabledAt = try #require(enabled.enabledAt)
        #expect(try await db.deletionDates(store, ids: dated.map(\.id)) == kept, "kept dates did not move")
        for account in undated {
            let date = try #require(try await store.account(account.id)?.deletionDate)
            #expect(abs(date.timeIntervalSince(enabledAt.addingTimeInterval(7 * 86_400))) < 0.001)
        }
        // A retention change while enabled applies to the undated ones only.
        try await policies.enable(retentionDays: 3)
        #expect(try await db.deletionDates(store, ids: dated.map(\.id)) == kept)
        for account in undated {
            let date = try #require(try await store.account(account.id)?.deletionDate)
            #expect(abs(date.timeIntervalSince(enabledAt.addingTimeInterval(3 * 86_400))) < 0.001)
        }
        // Time passes for everyone: 20 days and an hour, so the kept dates are due an hour
        // ago, the enabling (3 days) long past: all go, by their own dates.
        try await db.travel(days: 20 + CleanupTests.hour)
        let report = try await CleanupReport.make(client: db.client, configuration: .init(), logger: db.logger)
        #expect(report.eligible == 6)
        // Only 19 days for the kept dates instead: due in 23 hours, while the undated are due.
        try await db.client.query("UPDATE herald.accounts SET delete_after = delete_after + interval '1 day' WHERE delete_after IS NOT NULL", logger: db.logger)
        let runID = "re-\(UUID().uuidString.prefix(6))"
        _ = try await db.handle(CleanupRunJob(runID: runID), configuration: .init(), exchange: "tre.events")
        #expect(try await db.accountIDs() == Set(dated.map(\.id)))
        try await db.dropOutbox(exchange: "tre.events")
    }

    /// A link removes the date for good, a kept one too: never deleted, whatever comes next.
    @Test func aLinkedAccountIsNeverDeleted() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.enable(sinceDaysAgo: 10, retentionDays: 30)
        let store = AccountStore(client: db.client, logger: db.logger)
        for n in 0..<4 { #expect(try await store.createAnonymousAccount(id: "ln-\(n)")) }
        try await db.client.query("UPDATE herald.accounts SET created_at = now() - interval '200 days'", logger: db.logger)
        try await CleanupPolicyStore(client: db.client, logger: db.logger).disable()
        // Two linked after their date was kept, one while cleanup is on again; one stays anonymous.
        #expect(try await store.linkProvider(accountID: "ln-0", provider: "google.com", providerUID: "g-ln-0"))
        #expect(try await store.linkProvider(accountID: "ln-1", provider: "phone", providerUID: "+15550001"))
        for id in ["ln-0", "ln-1"] {
            let account = try #require(try await store.account(id))
            #expect(!account.isAnonymous && account.deletionDate == nil && !account.deletionDateKept)
        }
        // 21 days pass: the two left anonymous are due a day ago; enabling writes their dates.
        try await db.travel(days: 21)
        try await CleanupPolicyStore(client: db.client, logger: db.logger).enable(retentionDays: 1)
        #expect(try await store.account("ln-3")?.deletionDateKept == true)
        #expect(try await store.linkProvider(accountID: "ln-2", provider: "apple.com", providerUID: "a-ln-2"))
        _ = try await db.handle(CleanupRunJob(runID: "ln-\(UUID().uuidString.prefix(6))"), configuration: .init(), exchange: "tln.events")
        #expect(try await db.accountIDs() == ["ln-0", "ln-1", "ln-2"])
        #expect(try await db.outboxAccountIDs(exchange: "tln.events") == ["ln-3"])
        try await db.dropOutbox(exchange: "tln.events")
    }

    /// The preview counts each anonymous account once, on the UTC day its date falls, for the
    /// retention asked; disabled or enabled; kept dates do not depend on the retention.
    @Test func thePreviewCountsAccountsPerDay() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.insert((0..<3).map { GeneratedAccount(id: "pv-old-\($0)", ageDays: 100, anonymous: true, linked: false) }
            + (0..<2).map { GeneratedAccount(id: "pv-new-\($0)", ageDays: 10, anonymous: true, linked: false) }
            + [GeneratedAccount(id: "pv-linked", ageDays: 100, anonymous: true, linked: true),
               GeneratedAccount(id: "pv-member", ageDays: 100, anonymous: false, linked: true)])
        let store = AccountStore(client: db.client, logger: db.logger)
        let created = try await db.createdAt(store, ids: ["pv-new-0"])

        // Disabled: as if enabled now, every account counts from now.
        var preview = try await CleanupPreview.make(client: db.client, retentionSeconds: 30 * 86_400, logger: db.logger)
        #expect(!preview.policy.enabled && preview.dueNow == 0 && preview.total == 5 && preview.kept == 0)
        #expect(preview.days == [.init(day: Self.day(preview.countsFrom.addingTimeInterval(30 * 86_400)), accounts: 5, kept: 0)])
        #expect(abs(preview.countsFrom.timeIntervalSinceNow) < 60)

        // Enabled 60 days ago: the old ones are due already; the new ones 15 days after creation.
        try await db.enable(sinceDaysAgo: 60, retentionDays: 30)
        preview = try await CleanupPreview.make(client: db.client, retentionSeconds: 15 * 86_400, logger: db.logger)
        let newDay = Self.day(created["pv-new-0"]!.addingTimeInterval(15 * 86_400))
        #expect(preview.dueNow == 3 && preview.days == [.init(day: newDay, accounts: 2, kept: 0)] && preview.total == 5)
        #expect(preview.retentionSeconds == 15 * 86_400)
        // Without a retention: the policy's (30 days): the new ones 30 days after creation.
        preview = try await CleanupPreview.make(client: db.client, retentionSeconds: nil, logger: db.logger)
        #expect(preview.dueNow == 3 && preview.days == [.init(day: Self.day(created["pv-new-0"]!.addingTimeInterval(30 * 86_400)), accounts: 2, kept: 0)])
        // It agrees with the runs' rule.
        #expect(try await CleanupReport.make(client: db.client, configuration: .init(), logger: db.logger).eligible == preview.dueNow)

        // Disabled again: the 5 dates are kept; a later account has none until enabled, so a
        // one-day preview puts it on tomorrow while the kept dates stay where they were.
        try await CleanupPolicyStore(client: db.client, logger: db.logger).disable()
        #expect(try await store.createAnonymousAccount(id: "pv-later"))
        preview = try await CleanupPreview.make(client: db.client, retentionSeconds: 86_400, logger: db.logger)
        let keptNewDay = Self.day(created["pv-new-0"]!.addingTimeInterval(30 * 86_400))
        let tomorrow = Self.day(preview.countsFrom.addingTimeInterval(86_400))
        #expect(preview.dueNow == 3 && preview.kept == 5 && preview.total == 6)
        #expect(preview.days == [.init(day: tomorrow, accounts: 1, kept: 0), .init(day: keptNewDay, accounts: 2, kept: 2)].sorted { $0.day < $1.day })
    }

    /// `heraldctl cleanup preview` (the binary) prints the same in JSON and refuses a bad retention.
    @Test func heraldctlPreviewPrintsTheDaysInJSON() async throws {
        let db = try await CleanupDatabase()
        defer { db.close() }
        try await db.reset()
        try await db.insert((0..<4).map { GeneratedAccount(id: "cli-\($0)", ageDays: 2, anonymous: true, linked: false) })
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_DATABASE_URL"] = CleanupDatabase.url
        environment["HERALD_DATABASE_TLS"] = "disable"
        let output = try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", ["cleanup", "preview", "--retention", "7d", "--output", "json"], environment: environment)
        let parsed = try JSONSerialization.jsonObject(with: Data(output.utf8))
        let object = try #require(parsed as? [String: Any], "not a JSON object: \(output)")
        #expect(object["total"] as? Int == 4)
        #expect(object["due_now"] as? Int == 0)
        #expect((object["retention_days"] as? NSNumber)?.doubleValue == 7)
        let days = try #require(object["days"] as? [[String: Any]])
        #expect(days.count == 1)
        #expect(days.first?["accounts"] as? Int == 4)
        await #expect(throws: (any Error).self) {
            _ = try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", ["cleanup", "preview", "--retention", "0d"], environment: environment)
        }
    }

    static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }
}

extension CleanupDatabase {
    /// Each account's deletion date (``AccountStore/Account/deletionDate``), by id.
    func deletionDates(_ store: AccountStore, ids: [String]) async throws -> [String: Date] {
        var out: [String: Date] = [:]
        for id in ids { out[id] = try await store.account(id)?.deletionDate }
        return out
    }

    func createdAt(_ store: AccountStore, ids: [String]) async throws -> [String: Date] {
        var out: [String: Date] = [:]
        for id in ids { out[id] = try await store.account(id)?.createdAt }
        return out
    }
}
