import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

@Suite struct CleanupUnitTests {
    @Test func theAccountDeletedBodyIsTheEventShapeWithEscapedFields() throws {
        let event = AccountDeletedEvent(accountID: "a\"b\\c\u{1}é", createdAt: Date(timeIntervalSince1970: 0),
                                        deletedAt: Date(timeIntervalSince1970: 1_800_000_000.5), runID: "cr-1").outgoing
        #expect(event.name == "account.deleted" && event.typeName == "account.deleted.v1")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
        #expect(object["account_id"] as? String == "a\"b\\c\u{1}é")
        #expect(object["version"] as? Int == 1)
        #expect(object["event"] as? String == "account.deleted")
        #expect(object["reason"] as? String == "anonymous_expired")
        #expect(object["run_id"] as? String == "cr-1")
        #expect(object["created_at"] as? String == "1970-01-01T00:00:00.000Z")
        #expect((object["deleted_at"] as? String)?.hasPrefix("2027-01-15T08:00:00.5") == true)
        #expect(object["occurred_at"] as? String == object["deleted_at"] as? String)
    }

    @Test func cleanupKeysParseWithDefaultsAndRanges() throws {
        let defaults = try HeraldConfiguration(every: ConfigSource(values: [:]))
        #expect(defaults.cleanup.batchSize == 1_000 && defaults.cleanup.maxAccountsPerRun == 1_000_000)
        let source = ConfigSource(values: ["cleanup.batch_size": 50, "cleanup.purge.job_runs_days": 2],
                                  environment: ["HERALD_CLEANUP_RATE_LIMIT_PER_SECOND": "0", "HERALD_CLEANUP_FAN_OUT": "4"])
        let configuration = try HeraldConfiguration(every: source)
        #expect(configuration.cleanup.batchSize == 50)
        #expect(configuration.cleanup.rateLimitPerSecond == 0)
        #expect(configuration.cleanup.fanOut == 4)
        #expect(PurgeTarget.registry(configuration.cleanup).first { $0.name == "job_runs" }?.retentionDays == 2)
        #expect(source.unknownKeys().isEmpty)
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: ["cleanup.batch_size": 0])) }
    }

    @Test func theShippedConfigurationFileNamesEveryCleanupKey() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let source = try ConfigSource(path: root.appendingPathComponent("Config/herald.yaml").path, environment: [:])
        _ = try HeraldConfiguration(every: source)
        #expect(source.unknownKeys().isEmpty)
        for key in ["cleanup.batch_size", "cleanup.max_accounts_per_run", "cleanup.rate_limit_per_second", "cleanup.purge.job_runs_days",
                    "cleanup.purge.sms_app_verifications_days", "cleanup.purge.apple_notifications_days", "cleanup.purge.apple_relay_addresses_days",
                    "cleanup.purge.verify_days"] {
            #expect(source.map("cleanup").keys.contains(String(key.dropFirst("cleanup.".count))), "\(key)")
        }
    }

    /// The retentions of the tables issue 31 added to the purge targets: defaults, the
    /// targets they set, and a bad value refused naming its key.
    @Test func theNewPurgeRetentionsParseAndABadValueNamesItsKey() throws {
        let defaults = try HeraldConfiguration(every: ConfigSource(values: [:])).cleanup.purge
        #expect(defaults.smsAppVerificationsDays == 2 && defaults.appleNotificationsDays == 60 && defaults.appleRelayAddressesDays == 365)
        #expect(defaults.verifyDays == 30)
        let source = ConfigSource(values: ["cleanup.purge.sms_app_verifications_days": 5, "cleanup.purge.apple_notifications_days": 0],
                                  environment: ["HERALD_CLEANUP_PURGE_APPLE_RELAY_ADDRESSES_DAYS": "90"])
        let targets = PurgeTarget.registry(try HeraldConfiguration(every: source).cleanup)
        #expect(targets.first { $0.name == "sms_app_verifications" }?.retentionDays == 5)
        #expect(targets.first { $0.name == "apple_notifications" }?.retentionDays == 0)
        #expect(targets.first { $0.name == "apple_relay_addresses" }?.retentionDays == 90)
        #expect(source.unknownKeys().isEmpty)
        for (key, value) in [("cleanup.purge.sms_app_verifications_days", "-1"), ("cleanup.purge.apple_relay_addresses_days", "a year"),
                             ("cleanup.purge.apple_notifications_days", "7"), ("cleanup.purge.apple_notifications_days", "40000")] {
            let variable = "HERALD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
            let error = #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(path: nil, environment: [variable: value])) }
            #expect(error?.key == key, "\(key)=\(value)")
        }
    }

    @Test func runIDsAreValidMessageIDPrefixes() throws {
        let id = CleanupScheduler.newRunID(now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(id.hasPrefix("cr-20270115T080000Z-"))
        try CleanupRunJob(runID: id).validate()
        try JobEnvelope.checkMessageID(id + ".r1800000000.12")
    }

    /// The rule's "anonymous and unlinked", of the account under `alias`.
    static func anonymous(_ alias: String) -> String {
        "\(alias).is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = \(alias).id)"
    }

    /// A statement's text with every run of whitespace one space.
    static func flat(_ sql: String) -> String {
        sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The rule (CleanupEligibility) is written out in each statement that applies it: every one
    /// holds the same two arms, and the batches read each arm by its index, limited (and locked).
    @Test func theEligibilityRuleIsTheSameInEveryStatementThatAppliesIt() throws {
        let anonymous = Self.anonymous("a")
        let cutoff = "(SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END"
            + " WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END"
            + " FROM herald.cleanup_policy p)"
        let kept = "a.delete_after < now() AND \(anonymous)"
        let computed = "a.delete_after IS NULL AND a.created_at < \(cutoff) AND \(anonymous)"
        for sql in [EligibleCount.sql, AnyEligible.sql, CleanupRunJoin.sql] {
            #expect(Self.flat(sql).contains("WHERE ((\(kept)) OR (\(computed)))"), "\(sql)")
        }
        // Kept dates by their index first, then computed ones by theirs, each limited and locked.
        let batch = Self.flat(AccountsDeleteBatch.sql)
        let keptArm = try #require(batch.range(of: "WHERE \(kept) ORDER BY a.delete_after LIMIT $3::integer FOR UPDATE OF a SKIP LOCKED) kept"))
        let computedArm = try #require(batch.range(of: "WHERE \(computed) ORDER BY a.created_at LIMIT $3::integer FOR UPDATE OF a SKIP LOCKED) computed"))
        #expect(keptArm.lowerBound < computedArm.lowerBound)
        #expect(batch.contains(") computed LIMIT $3::integer))"))
        let sample = Self.flat(EligibleSample.sql)
        #expect(sample.contains("WHERE \(kept) ORDER BY a.delete_after LIMIT $1::integer) kept UNION ALL"))
        #expect(sample.contains("WHERE \(computed) ORDER BY a.created_at LIMIT $1::integer) computed LIMIT $1::integer"))
        #expect(!sample.contains("FOR UPDATE"))
    }

    @Test func aDeletionDateIsTheKeptOneElseCreationOrEnablingPlusRetention() {
        let frozen = "CASE WHEN a.created_at < p.kept_until THEN greatest(a.created_at, p.kept_enabled_at) + p.kept_retention END"
        let anonymous = Self.anonymous("a")
        // An account's date as heraldctl and the front API read it: written, else frozen, else the enabled policy's.
        let account = Self.flat(AccountRead.sql)
        #expect(account.contains("CASE WHEN \(anonymous) THEN coalesce(a.delete_after, \(frozen), CASE WHEN p.enabled THEN greatest(a.created_at, p.enabled_at) + p.retention END) END"))
        // A date is kept (written, or frozen by the last disable) the same way wherever it is counted.
        let kept = "(a.delete_after IS NOT NULL OR coalesce(a.created_at < p.kept_until, false))"
        #expect(account.contains("(\(anonymous) AND \(kept))"))
        #expect(Self.flat(KeptDatesCount.sql).contains("WHERE \(anonymous) AND \(kept)"))
        let preview = Self.flat(PreviewDays.sql)
        #expect(preview.contains("\(kept) AS kept") && preview.contains("WHERE \(anonymous))"))
        // The preview: written, else frozen by the last disable (accounts created before it), else enabled-at-E.
        #expect(Self.flat(PreviewDays.sql).contains("coalesce(a.delete_after, \(frozen), greatest(a.created_at, p.counts_from) + make_interval(secs => p.preview_retention))"))
        // Enable writes exactly the frozen date, only while disabled, in locked batches by a cursor.
        let batch = Self.flat(FrozenDatesWrite.sql)
        #expect(batch.contains("SET delete_after = greatest(a.created_at, p.kept_enabled_at) + p.kept_retention"))
        #expect(batch.contains("WHERE NOT p.enabled") && batch.contains("b.created_at >= $1::timestamptz") && batch.contains("LIMIT $2::integer FOR UPDATE OF b"))
        // The accounts it writes: anonymous and unlinked, created before the schedule froze, with no date yet.
        #expect(batch.contains("WHERE NOT q.enabled AND b.created_at < q.kept_until AND b.created_at >= $1::timestamptz AND b.delete_after IS NULL"
            + " AND \(Self.anonymous("b")) ORDER BY b.created_at"))
    }

    @Test func thePreviewRetentionIsBounded() {
        #expect(!CleanupPreview.retentionRange.contains(0))
        #expect(CleanupPreview.retentionRange.contains(30 * 86_400))
        #expect(!CleanupPreview.retentionRange.contains(3_651 * 86_400))
    }
}
