import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import PostgresNIO
import Testing

/// The rules of phone verification, against the real broker and database, with the dev
/// outbox provider as the phone.
@Suite(.needsServers) struct SMSVerificationTests {
    @Test func aCodeIsSentHashedAndVerifiesOnce() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-a", phoneNumber: harness.phone(1), purpose: .mfaSignIn)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(sms.code(to: job.phoneNumber))
            #expect(sms.delivered().last?.text.contains("sign-in code") == true)

            // Stored only as a keyed hash: neither the code nor its digits appear in the row.
            let rows = try await harness.database.query("""
                SELECT c.code_hash, c.key_id FROM herald.sms_codes c JOIN herald.sms_verifications v ON v.code_id = c.id
                 WHERE v.verification_id = \(job.verificationID)
                """, logger: harness.logger)
            for try await (hash, keyID) in rows.decode((ByteBuffer, String).self) {
                #expect(hash.readableBytes == 32)
                #expect(!String(buffer: hash).contains(code))
                #expect(keyID == "test1" || keyID == "dev1")
            }

            // The dev outbox, read by people, holds the text with the code masked.
            let outbox = try await harness.database.query("SELECT body::text FROM herald.dev_outbox WHERE message_id = \(id)", logger: harness.logger)
            for try await body in outbox.decode(String.self) {
                #expect(body.contains("****** is your Herald sign-in code"))
                #expect(!body.contains(code))
            }

            let wrong = code == "000000" ? "000001" : "000000"
            #expect(try await sms.verify(job.verificationID, wrong) == .wrongCode(attemptsLeft: 4))
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .mfaSignIn))
            #expect(try await sms.verify(job.verificationID, code) == .alreadyUsed)
            #expect(try await sms.verify("\(harness.namespace)-nope", code) == .notFound)

            let events = try await sms.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["sms.sent"])
            #expect(events.first?.1["verification_id"] as? String == job.verificationID)
            #expect(events.first?.1["phone"] as? String == Redact.phone(job.phoneNumber))
            #expect(try await sms.verification(job.verificationID)?.state == "sent")
            try await worker.stop()
        }
    }

    @Test func codesExpire() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { $0.sms.codeTTLSeconds = 1 }
            let job = harness.sms(2)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(sms.code(to: job.phoneNumber))
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await sms.verify(job.verificationID, code) == .expired)
            #expect(try await sms.verify(job.verificationID, code) == .expired)
            try await worker.stop()
        }
    }

    @Test func fiveWrongCodesKillTheCode() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = harness.sms(3)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(sms.code(to: job.phoneNumber))
            let wrong = code == "999999" ? "999998" : "999999"
            for left in [4, 3, 2, 1, 0] {
                #expect(try await sms.verify(job.verificationID, wrong) == .wrongCode(attemptsLeft: left))
            }
            // Dead: even the right code is refused now.
            #expect(try await sms.verify(job.verificationID, code) == .tooManyAttempts)
            try await worker.stop()
        }
    }

    @Test func ofAHundredConcurrentChecksOfTheRightCodeExactlyOneSucceeds() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = harness.sms(4)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(sms.code(to: job.phoneNumber))
            let results = try await withThrowingTaskGroup(of: PhoneVerifier.Result.self) { group in
                for _ in 0..<100 { group.addTask { try await sms.verify(job.verificationID, code) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { if case .verified = $0 { true } else { false } }.count == 1)
            #expect(results.filter { $0 == .alreadyUsed }.count == 99)
            try await worker.stop()
        }
    }

    @Test func aSecondRequestWhileACodeIsPendingSendsNothingAndSharesTheCode() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { $0.sms.resendLimit = .init(max: 1, windowSeconds: 3600) }
            let phone = harness.phone(5)
            let first = SMSVerificationJob(verificationID: "\(harness.namespace)-r1", phoneNumber: phone)
            let second = SMSVerificationJob(verificationID: "\(harness.namespace)-r2", phoneNumber: phone)
            let a = try await harness.enqueue(first)
            try await eventually("first sent") { try await harness.ledger(a)?.0 == "completed" }
            let b = try await harness.enqueue(second)
            try await eventually("second decided") { try await harness.ledger(b)?.0 == "completed" }
            #expect(sms.delivered().filter { $0.to == phone }.count == 1)
            #expect(try await sms.verification(second.verificationID)?.state == "reused")
            // The pending code answers the new verification id.
            let code = try #require(sms.code(to: phone))
            #expect(try await sms.verify(second.verificationID, code) == .verified(phoneNumber: phone, purpose: .signIn))
            #expect(try await sms.verify(first.verificationID, code) == .alreadyUsed)

            // Another purpose is another code.
            let mfa = SMSVerificationJob(verificationID: "\(harness.namespace)-r3", phoneNumber: phone, purpose: .mfaEnroll)
            let c = try await harness.enqueue(mfa)
            try await eventually("other purpose sent") { try await harness.ledger(c)?.0 == "completed" }
            #expect(sms.delivered().filter { $0.to == phone }.count == 2)
            try await worker.stop()
        }
    }

    @Test func forceResendSendsANewCodeWithinItsOwnLimit() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            // The resend limit's test: the code's budget of paid sends (2 by default) out of its way.
            let worker = try await sms.start {
                $0.sms.resendLimit = .init(max: 1, windowSeconds: 3600)
                $0.sms.fallback.maxPaidSends = 10
            }
            let phone = harness.phone(6)
            let first = SMSVerificationJob(verificationID: "\(harness.namespace)-f1", phoneNumber: phone)
            let a = try await harness.enqueue(first)
            try await eventually("first sent") { try await harness.ledger(a)?.0 == "completed" }
            let oldCode = try #require(sms.code(to: phone))

            let forced = SMSVerificationJob(verificationID: "\(harness.namespace)-f2", phoneNumber: phone, forceResend: true)
            let b = try await harness.enqueue(forced)
            try await eventually("resent") { try await harness.ledger(b)?.0 == "completed" }
            #expect(sms.delivered().filter { $0.to == phone }.count == 2)
            let newCode = try #require(sms.code(to: phone))

            // Over the resend limit: refused with a reason and an event; nothing sent.
            let again = SMSVerificationJob(verificationID: "\(harness.namespace)-f3", phoneNumber: phone, forceResend: true)
            let c = try await harness.enqueue(again)
            try await eventually("refused") { try await harness.ledger(c)?.0 == "rejected" }
            #expect(sms.delivered().filter { $0.to == phone }.count == 2)
            #expect(try await sms.verification(again.verificationID)?.reason == "rate_limited:resend")

            // The new code replaced the old one, for both verification ids.
            if oldCode != newCode {
                #expect(try await sms.verify(first.verificationID, oldCode) == .wrongCode(attemptsLeft: 4))
            }
            #expect(try await sms.verify(first.verificationID, newCode) == .verified(phoneNumber: phone, purpose: .signIn))
            // Events are relayed in no guaranteed order.
            let events = try await sms.events.take(atLeast: 3).map(\.0).sorted()
            #expect(events == ["sms.refused", "sms.sent", "sms.sent"])
            try await worker.stop()
        }
    }

    @Test func testNumbersSendNothingUseNoQuotaAndAcceptTheFixedCode() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let phone = harness.phone(7)
            let worker = try await sms.start {
                $0.sms.testNumbers = [phone: "424242"]
                $0.sms.phoneLimit = .init(max: 1, windowSeconds: 3600)
            }
            var ids: [String] = []
            for n in 0..<3 {
                ids.append(try await harness.enqueue(SMSVerificationJob(verificationID: "\(harness.namespace)-t\(n)", phoneNumber: phone)))
            }
            try await eventually("decided") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 3 }
            #expect(sms.delivered().isEmpty)
            #expect(try await harness.outboxCount(ids) == 0)
            let counters = try await harness.database.query("SELECT count(*)::bigint FROM herald.sms_rate_counters WHERE key = \(phone)", logger: harness.logger)
            for try await count in counters.decode(Int.self) { #expect(count == 0) }
            #expect(try await sms.verify("\(harness.namespace)-t2", "424243") == .wrongCode(attemptsLeft: 4))
            #expect(try await sms.verify("\(harness.namespace)-t2", "424242") == .verified(phoneNumber: phone, purpose: .signIn))
            try await worker.stop()
        }
    }

    @Test func theRegionPolicyRefusesWithAReasonAndAnEvent() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { $0.sms.regions = .init(mode: .allow, regions: ["DE"]) }
            let french = SMSVerificationJob(verificationID: "\(harness.namespace)-fr", phoneNumber: "+33612345" + String(format: "%03d", Int.random(in: 0..<1000)))
            let german = harness.sms(8)
            let a = try await harness.enqueue(french)
            let b = try await harness.enqueue(german)
            try await eventually("decided") {
                let (first, second) = (try await harness.ledger(a)?.0, try await harness.ledger(b)?.0)
                return first == "rejected" && second == "completed"
            }
            #expect(sms.delivered().map(\.to) == [german.phoneNumber])
            let refused = try #require(try await sms.verification(french.verificationID))
            #expect(refused.state == "refused")
            #expect(refused.reason == "region_not_allowed:FR")
            let events = try await sms.events.take(atLeast: 2)
            #expect(events.contains { $0.0 == "sms.refused" && $0.1["reason"] as? String == "region_not_allowed:FR" && $0.1["region"] as? String == "FR" })
            try await worker.stop()
        }
    }

    @Test(arguments: ["phone", "prefix", "ip"])
    func eachRateLimitRefusesOverItsMaximumAndOnlyThen(scope: String) async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                $0.sms.resendIntervalSeconds = 0
                // Each limit's own test: the code's budget of paid sends out of its way.
                $0.sms.fallback.maxPaidSends = 10
                switch scope {
                case "phone": $0.sms.phoneLimit = .init(max: 2, windowSeconds: 3600)
                case "prefix": $0.sms.prefixLimit = .init(max: 2, windowSeconds: 3600)
                default: $0.sms.ipLimit = .init(max: 2, windowSeconds: 3600)
                }
            }
            // Same number for "phone"; numbers of one range for "prefix"; unrelated numbers from one IP for "ip".
            func job(_ n: Int) -> SMSVerificationJob {
                let phone = switch scope {
                case "phone": harness.phone(9)
                case "prefix": harness.phone(10 + n)
                default: "+4916\(String(format: "%03d", n))" + String(format: "%06d", Int.random(in: 0..<1_000_000))
                }
                return SMSVerificationJob(verificationID: "\(harness.namespace)-l\(n)", phoneNumber: phone, client: .init(ip: harness.clientIP()))
            }
            var ids: [String] = []
            for n in 0..<3 {
                ids.append(try await harness.enqueue(job(n)))
                try await eventually("decided \(n)") { ["completed", "rejected"].contains(try await harness.ledger(ids[n])?.0 ?? "") }
            }
            let statuses = try await harness.statuses(ids)
            #expect(ids.map { statuses[$0] } == ["completed", "completed", "rejected"])
            #expect(try await sms.verification("\(harness.namespace)-l2")?.reason == "rate_limited:\(scope)")
            #expect(sms.delivered().count == 2)
            try await worker.stop()
        }
    }

    @Test func theGlobalLimitHoldsAcrossWorkers() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            // A window of its own (no other test counts in it), emptied first.
            let window = 7919
            try await harness.database.query("""
                DELETE FROM herald.sms_rate_counters WHERE scope = 'global' AND key LIKE \("shard-\(window)-%")
                """, logger: harness.logger)
            let configure: (inout HeraldConfiguration) -> Void = {
                $0.sms.globalLimit = .init(max: 5, windowSeconds: window)
                $0.sms.resendIntervalSeconds = 0
            }
            let first = try await sms.start(configure)
            let second = try await sms.start(configure)
            var ids: [String] = []
            for n in 0..<8 { ids.append(try await harness.enqueue(harness.sms(100 + n * 37))) }
            try await eventually("all decided") { try await harness.statuses(ids).values.filter { $0 != "running" && $0 != "retrying" }.count == 8 }
            let statuses = try await harness.statuses(ids).values
            #expect(statuses.filter { $0 == "completed" }.count == 5)
            #expect(statuses.filter { $0 == "rejected" }.count == 3)
            #expect(sms.delivered().count == 5)
            try await first.stop()
            try await second.stop()
        }
    }

    @Test func aRedeliveredVerificationIsNeverSentTwiceAndTheCrashWindowIsCounted() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = harness.sms(11)
            let a = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(a)?.0 == "completed" }
            // The same verification again under another message id: decided already, nothing sent.
            let b = try await harness.enqueue(job)
            try await eventually("second decided") { try await harness.ledger(b)?.0 == "completed" }
            #expect(sms.delivered().filter { $0.verificationID == job.verificationID }.count == 1)

            // A crash after the provider call and before the commit leaves the verification
            // 'sending': the next delivery sends a fresh code and counts the uncertain send.
            let crashed = harness.sms(12)
            let configuration = sms.configuration()
            let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
            let request = PhoneStore.Request(
                verificationID: crashed.verificationID, messageID: "crashed-\(harness.namespace)", phone: crashed.phoneNumber, purpose: "sign_in",
                force: false, test: false, hash: hasher.hash(Secret("123456"), context: PhoneVerifier.hashContext(phone: crashed.phoneNumber, purpose: "sign_in", tenant: "")),
                ttlSeconds: 300, maxAttempts: 5, resendIntervalSeconds: 30, limits: .init())
            #expect(try await PhoneStore.prepare(request, client: harness.database, logger: harness.logger) == .send(uncertain: false))
            // Its worker is gone: no presence lock is held for its owner key (0).
            let c = try await harness.enqueue(crashed)
            try await eventually("resent") { try await harness.ledger(c)?.0 == "completed" }
            let row = try #require(try await sms.verification(crashed.verificationID))
            #expect(row.uncertainSends == 1)
            #expect(row.state == "sent")
            let code = try #require(sms.code(to: crashed.phoneNumber))
            #expect(try await sms.verify(crashed.verificationID, code) == .verified(phoneNumber: crashed.phoneNumber, purpose: .signIn))
            try await worker.stop()
        }
    }

    @Test func anInvalidNumberIsDeadLetteredWithAClearReason() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let bad = #"{"version":1,"verification_id":"x","phone_number":"+999123456789","purpose":"sign_in"}"#
            try await harness.client.publishRaw(body: Array(bad.utf8), routingKey: "sms.verification",
                                                properties: JobEnvelope(messageID: "\(harness.namespace)-bad", typeName: SMSVerificationJob.typeName).properties())
            var letters: [AMQPDelivery] = []
            try await eventually("dead-lettered") {
                letters += try await harness.drainDeadLetters(.sms)
                return !letters.isEmpty
            }
            guard let reason = letters.first?.properties.deadLetterStamp?.reason else {
                Issue.record("no reason on the dead letter")
                return
            }
            #expect(reason.contains("phone_number starts with no assigned country calling code"), "\(reason)")
            try await worker.stop()
        }
    }

    @Test func aDuplicateWhileTheFirstIsSendingWaitsAndThenSendsNothing() async throws {
        try await withHarness(retryDelays: [300], maxAttempts: 10) { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = harness.sms(13)
            // Another job of this verification is at its provider call right now.
            let configuration = sms.configuration()
            let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
            var first = PhoneStore.Request(
                verificationID: job.verificationID, messageID: "first-\(harness.namespace)", phone: job.phoneNumber, purpose: "sign_in",
                force: false, test: false, hash: hasher.hash(Secret("123456"), context: PhoneVerifier.hashContext(phone: job.phoneNumber, purpose: "sign_in", tenant: "")),
                ttlSeconds: 300, maxAttempts: 5, resendIntervalSeconds: 30, limits: .init())
            // The first job's worker is alive: its presence lock is held.
            first.ownerKey = Int64.random(in: 1_000_000...Int64.max)
            let (ownerKey, database, logger) = (first.ownerKey, harness.database, harness.logger)
            let presence = Task {
                try await database.withConnection { connection in
                    try await connection.query("SELECT pg_advisory_lock(\(ownerKey))", logger: logger)
                    while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
                    try await connection.query("SELECT pg_advisory_unlock(\(ownerKey))", logger: logger)
                }
            }
            try await eventually("presence held") {
                let rows = try await database.query("SELECT count(*)::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = \(ownerKey)", logger: logger)
                for try await count in rows.decode(Int.self) { return count == 1 }
                return false
            }
            #expect(try await PhoneStore.prepare(first, client: harness.database, logger: harness.logger) == .send(uncertain: false))
            let id = try await harness.enqueue(job)
            try await eventually("waiting for the first") { try await harness.ledger(id)?.0 == "retrying" }
            #expect(sms.delivered().isEmpty)
            // The first job's provider accepted.
            try await harness.database.query("UPDATE herald.sms_verifications SET state = 'sent' WHERE verification_id = \(job.verificationID)", logger: harness.logger)
            presence.cancel()
            try await eventually("decided") { try await harness.ledger(id)?.0 == "completed" }
            #expect(sms.delivered().isEmpty, "nothing sent a second time")
            try await worker.stop()
        }
    }

    @Test func aLateRetryDoesNotReplaceACodeANewerRequestDelivered() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start { $0.sms.resendIntervalSeconds = 0 }
            let old = harness.sms(14)
            // The old verification's send failed at every provider; its retry is in a delay queue.
            let configuration = sms.configuration()
            let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
            let request = PhoneStore.Request(
                verificationID: old.verificationID, messageID: "old-\(harness.namespace)", phone: old.phoneNumber, purpose: "sign_in",
                force: false, test: false, hash: hasher.hash(Secret("123456"), context: PhoneVerifier.hashContext(phone: old.phoneNumber, purpose: "sign_in", tenant: "")),
                ttlSeconds: 300, maxAttempts: 5, resendIntervalSeconds: 0, limits: .init())
            #expect(try await PhoneStore.prepare(request, client: harness.database, logger: harness.logger) == .send(uncertain: false))
            try await harness.database.query("UPDATE herald.sms_verifications SET state = 'retrying' WHERE verification_id = \(old.verificationID)", logger: harness.logger)
            // The user asks again: a new code is sent.
            let newer = SMSVerificationJob(verificationID: "\(harness.namespace)-newer", phoneNumber: old.phoneNumber)
            let a = try await harness.enqueue(newer)
            try await eventually("newer sent") { try await harness.ledger(a)?.0 == "completed" }
            let code = try #require(sms.code(to: old.phoneNumber))
            // The old retry arrives: the code went out since, so it sends nothing and shares it.
            let b = try await harness.enqueue(old)
            try await eventually("old decided") { try await harness.ledger(b)?.0 == "completed" }
            #expect(sms.delivered().filter { $0.to == old.phoneNumber }.count == 1)
            #expect(try await sms.verification(old.verificationID)?.state == "reused")
            #expect(try await sms.verify(old.verificationID, code) == .verified(phoneNumber: old.phoneNumber, purpose: .signIn))
            try await worker.stop()
        }
    }
}
