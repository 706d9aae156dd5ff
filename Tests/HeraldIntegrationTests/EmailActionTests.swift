import AMQP
import Foundation
import HeraldClient
@testable import HeraldEmail
@testable import HeraldEmailCheck
@testable import HeraldRuntime
@testable import HeraldWire
import PostgresNIO
import Testing

/// The email actions other than sign-in, end to end over real SMTP: verify an address, change
/// it (and the recovery notice the old address gets), links superseding each other (OWASP
/// Forgot Password), a request_id reused for another target, and a job that runs out of tries.
@Suite(.needsServers) struct EmailActionTests {
    @Test func aVerifyEmailLinkArrivesAndIsConsumedOnce() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let job = email.job(1, mode: .verifyEmail)
            try await email.createAccount(for: job.email)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }

            let message = try #require(email.received(to: job.email).first)
            #expect(message.subject == "Verify your email for Herald")
            #expect(message.query("mode") == "verifyEmail")
            let code = try #require(message.query("oobCode"))
            #expect(try await email.consume(job.email, code) == .notFound, "not a sign-in code")
            guard case .success(let consumed, .verifyEmail, let continueURL, _) = try await email.consume(job.email, code, mode: .verifyEmail) else {
                Issue.record("the verify_email code was not consumed")
                return
            }
            #expect(consumed == job.email)
            #expect(continueURL == job.actionCodeSettings.url)
            #expect(try await email.consume(job.email, code, mode: .verifyEmail) == .alreadyUsed)
            try await worker.stop()
        }
    }

    /// The change link goes to the new address; using it sends the old address a
    /// recover_email notice (enqueued with the consume, sent by the worker like any job), whose
    /// link gives the front API the address to restore and the one it replaces, once.
    @Test func aChangedAddressIsVerifiedAndTheOldOneCanRecoverIt() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let job = email.job(2, mode: .verifyAndChangeEmail, locale: "en")
            let old = try #require(job.oldEmail)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            #expect(email.received(to: old).isEmpty, "nothing for the old address before the change is verified")

            let change = try #require(email.received(to: job.email).first)
            #expect(change.subject == "Confirm your new email for Herald")
            #expect(change.query("mode") == "verifyAndChangeEmail")
            let changeCode = try #require(change.query("oobCode"))
            #expect(try await email.consume(old, changeCode, mode: .verifyAndChangeEmail) == .emailMismatch, "only for the new address")
            guard case .success(job.email, .verifyAndChangeEmail, _, _) = try await email.consume(job.email, changeCode, mode: .verifyAndChangeEmail) else {
                Issue.record("the change code was not consumed")
                return
            }

            // The notice to the old address, through the outbox and the email worker.
            try await eventually("recovery notice") { !email.received(to: old).isEmpty }
            let notice = try #require(email.received(to: old).first)
            #expect(notice.subject == "The email address of your Herald account was changed")
            #expect(notice.query("mode") == "recoverEmail")
            #expect(notice.query("continueUrl") == job.actionCodeSettings.url)
            #expect(notice.query("lang") == "en")
            #expect(notice.link?.host == "auth.example.com", "built by the same link builder and policy")
            let recoverCode = try #require(notice.query("oobCode"))
            #expect(recoverCode != changeCode)
            #expect(try await email.consume(job.email, recoverCode, mode: .recoverEmail) == .emailMismatch, "only for the old address")
            #expect(try await email.consume(old, recoverCode, mode: .verifyAndChangeEmail) == .notFound, "a code of another mode")
            let recovered = try await email.consume(old, recoverCode, mode: .recoverEmail)
            guard case .recovered(let restore, let changedTo, let continueURL, let settings) = recovered else {
                Issue.record("the recovery code was not consumed: \(recovered)")
                return
            }
            #expect(restore == old, "the address to restore")
            #expect(changedTo == job.email, "the account that has it now")
            #expect(continueURL == job.actionCodeSettings.url)
            #expect(settings.iosBundleID == "com.example.ios")
            #expect(try await email.consume(old, recoverCode, mode: .recoverEmail) == .alreadyUsed)

            // Using the change code again enqueues nothing more: one notice.
            #expect(try await email.consume(job.email, changeCode, mode: .verifyAndChangeEmail) == .alreadyUsed)
            let recoveryID = try #require(try await email.requestIDs(to: old, mode: "recover_email").first)
            #expect(try await email.requestIDs(to: old, mode: "recover_email").count == 1)
            try await eventually("recovery sent") { try await email.request(recoveryID)?.0 == "sent" }
            #expect(email.received(to: old).count == 1)

            // Support sees both ends: the change names its recovery, the recovery what it replaces.
            let shownChange = try await showEmail(job.requestID, harness)
            #expect(shownChange["recovery_request_id"] as? String == recoveryID)
            #expect(shownChange["paired_email"] as? String == Redact.email(old))
            let shownRecovery = try await showEmail(recoveryID, harness)
            #expect(shownRecovery["mode"] as? String == "recover_email")
            #expect(shownRecovery["state"] as? String == "sent")
            #expect(shownRecovery["paired_email"] as? String == Redact.email(job.email))
            #expect((shownRecovery["codes"] as? [[String: Any]])?.map { $0["status"] as? String } == ["used"])
            let events = try await email.events.take(atLeast: 2)
            #expect(events.filter { $0.0 == "email.sent" }.compactMap { $0.1["mode"] as? String }.sorted() == ["recover_email", "verify_and_change_email"])
            try await worker.stop()
        }
    }

    /// Using one link of an (address, mode) makes every other pending link of that pair
    /// unusable, and says so.
    @Test func usingOneLinkSupersedesTheOtherPendingOnes() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let address = email.address(3)
            let jobs = [email.job(3, to: address), email.job(4, to: address), email.job(5, mode: .verifyAndChangeEmail, to: address)]
            var ids: [String] = []
            for job in jobs { ids.append(try await harness.enqueue(job)) }
            try await eventually("all sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 3 }
            let codes = try email.received(to: address).map { (try #require($0.query("mode")), try #require($0.query("oobCode"))) }
            let signIn = codes.filter { $0.0 == "signIn" }.map(\.1)
            let change = try #require(codes.first { $0.0 == "verifyAndChangeEmail" }?.1)
            #expect(signIn.count == 2)

            guard case .success = try await email.consume(address, signIn[1]) else {
                Issue.record("the second sign-in link was not consumed")
                return
            }
            #expect(try await email.consume(address, signIn[0]) == .superseded)
            #expect(try await email.consume(address, signIn[0]) == .superseded, "for good")
            let statuses = try await email.codes(jobs[0].requestID) + email.codes(jobs[1].requestID)
            #expect(Set(statuses) == ["superseded", "used"])
            // Another mode of the same address is another pair: still usable.
            guard case .success = try await email.consume(address, change, mode: .verifyAndChangeEmail) else {
                Issue.record("a code of another mode was superseded")
                return
            }
            try await worker.stop()
        }
    }

    /// Two links of one pair used at the same moment: exactly one works, the other is superseded.
    @Test func twoLinksOfOnePairUsedAtOnceGiveOneSuccess() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let address = email.address(13)
            let ids = [try await harness.enqueue(email.job(13, to: address)), try await harness.enqueue(email.job(14, to: address))]
            try await eventually("both sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }
            let codes = try email.received(to: address).map { try #require($0.query("oobCode")) }
            #expect(codes.count == 2)
            let results = try await withThrowingTaskGroup(of: EmailLinkVerifier.Result.self) { group in
                for code in codes { group.addTask { try await email.consume(address, code) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { if case .success = $0 { true } else { false } }.count == 1)
            #expect(results.filter { $0 == .superseded }.count == 1)
            try await worker.stop()
        }
    }

    /// A new reset_password request supersedes the older pending ones of the address.
    @Test func aNewPasswordResetSupersedesTheOlderLink() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let address = email.address(6)
            try await email.createAccount(for: address)
            let first = email.job(6, mode: .resetPassword, to: address)
            let firstID = try await harness.enqueue(first)
            try await eventually("first sent") { try await harness.ledger(firstID)?.0 == "completed" }
            let second = email.job(7, mode: .resetPassword, to: address)
            let secondID = try await harness.enqueue(second)
            try await eventually("second sent") { try await harness.ledger(secondID)?.0 == "completed" }
            #expect(try await email.codes(first.requestID) == ["superseded"], "superseded by the newer request, not by use")

            let codes = try email.received(to: address).map { try #require($0.query("oobCode")) }
            #expect(codes.count == 2)
            #expect(try await email.consume(address, codes[0], mode: .resetPassword) == .superseded)
            guard case .success(_, .resetPassword, _, _) = try await email.consume(address, codes[1], mode: .resetPassword) else {
                Issue.record("the newer reset link was not consumed")
                return
            }
            try await worker.stop()
        }
    }

    /// A request_id reused for another address or mode is dead-lettered with a reason naming
    /// the field (never the value), and nothing goes to the new target.
    @Test func aReusedRequestIDWithAnotherTargetIsRefused() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let original = email.job(8)
            let firstID = try await harness.enqueue(original)
            try await eventually("sent") { try await harness.ledger(firstID)?.0 == "completed" }

            var otherAddress = original
            otherAddress.email = email.address(9)
            var otherMode = original
            otherMode.mode = .verifyEmail
            var forged = email.job(10, mode: .signIn)
            forged.mode = .recoverEmail
            let ids = [try await harness.enqueue(otherAddress), try await harness.enqueue(otherMode), try await harness.enqueue(forged)]
            var letters: [String: String] = [:]
            try await eventually("dead-lettered") {
                for letter in try await harness.drainDeadLetters(.email) {
                    if let reason = letter.properties.deadLetterStamp?.reason { letters[letter.properties.messageID ?? ""] = reason }
                }
                return letters.count == 3
            }
            #expect(letters[ids[0]] == "request_id was used with another email")
            #expect(letters[ids[1]] == "request_id was used with another mode")
            #expect(letters[ids[2]] == "mode: recover_email is enqueued by Herald only")
            #expect(letters.values.allSatisfy { !$0.contains("@") }, "no address in a reason")
            // The ledger's dead record may trail the dead letter.
            try await eventually("recorded dead") { try await harness.statuses(ids).values.filter { $0 == "dead" }.count == 3 }
            #expect(email.received(to: otherAddress.email).isEmpty, "nothing sent to the new address")
            #expect(email.received(to: original.email).count == 1, "nor a second link to the first")
            #expect(try await email.request(original.requestID)?.0 == "sent", "the original request is untouched")
            #expect(try await email.requestIDs(to: forged.email, mode: "recover_email").isEmpty)
            try await worker.stop()
        }
    }

    /// A job dead-lettered after runner.max_attempts ends its request failed with the reason,
    /// its link code dead, and email.failed emitted.
    @Test func anExhaustedJobEndsFailedWithItsCodeDead() async throws {
        try await withHarness(retryDelays: [100], maxAttempts: 2) { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let job = email.job(11, to: email.address(11, behaviour: "fail451"))
            let id = try await harness.enqueue(job)
            try await eventually("dead") { try await harness.ledger(id)?.0 == "dead" }
            #expect(try await harness.ledger(id)?.1 == 2)

            let request = try #require(try await email.request(job.requestID))
            #expect(request.0 == "failed")
            #expect(request.1?.contains("smtp-451") == true, "the dead letter's reason")
            let codes = try await email.codes(job.requestID)
            #expect(codes.count == 2, "one code per try")
            #expect(codes.last == "failed", "the last try's code is dead")
            #expect(!codes.contains("pending"))
            let events = try await email.events.take(atLeast: 1)
            let failure = try #require(events.first { $0.0 == "email.failed" })
            #expect(failure.1["request_id"] as? String == job.requestID)
            #expect((failure.1["reason"] as? String)?.contains("smtp-451") == true)
            #expect(!events.contains { $0.0 == "email.sent" })
            #expect(email.received(to: job.email).isEmpty)
            try await worker.stop()
        }
    }

    /// An exhausted duplicate (another message id of a request that was sent) changes nothing
    /// and emits nothing: only the request's latest try can fail it.
    @Test func anExhaustedDuplicateLeavesASentRequestAlone() async throws {
        try await withHarness(retryDelays: [100], maxAttempts: 1) { harness in
            let email = try await EmailFixture(harness)
            let handler = try EmailHandler(configuration: email.configuration())
            let job = email.job(12)
            let sentID = try await harness.enqueue(job)
            let worker = try await email.start()
            try await eventually("sent") { try await harness.ledger(sentID)?.0 == "completed" }
            try await worker.stop()
            _ = try await email.events.take(atLeast: 1)

            let envelope = JobEnvelope(messageID: "\(harness.namespace)-duplicate", typeName: EmailActionJob.typeName)
            let context = JobContext(envelope: envelope, attempt: 1, mayBeRepeat: true, logger: harness.logger, database: harness.database)
            let outcome = handler.exhausted(job, reason: "email_in_progress", context: context)
            try await harness.database.withTransaction(logger: harness.logger) { try await outcome.write?($0, harness.logger) }
            #expect(try await email.request(job.requestID)?.0 == "sent")
            #expect(try await email.codes(job.requestID) == ["pending"])
            #expect(try await email.outboxEvents(named: "email.failed", requestID: job.requestID) == 0)
        }
    }

    private func showEmail(_ requestID: String, _ harness: Harness) async throws -> [String: Any] {
        let output = try await runHeraldctl(["verify", "show-email", requestID, "--output", "json"], namespace: harness.namespace)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    @Test func verifyAndChangeEmailNeedsTheOldAddress() throws {
        let settings = EmailActionJob.ActionCodeSettings(url: "https://app.example.com/")
        let missing = EmailActionJob(requestID: "r-1", email: "new@example.com", mode: .verifyAndChangeEmail, actionCodeSettings: settings)
        #expect(throws: JobValidationError("old_email is required for verify_and_change_email")) { try missing.validate() }
        let misplaced = EmailActionJob(requestID: "r-1", email: "a@example.com", mode: .signIn, oldEmail: "b@example.com", actionCodeSettings: settings)
        #expect(throws: JobValidationError("old_email is only for verify_and_change_email")) { try misplaced.validate() }
        let bad = EmailActionJob(requestID: "r-1", email: "new@example.com", mode: .verifyAndChangeEmail, oldEmail: "nobody", actionCodeSettings: settings)
        #expect(throws: JobValidationError.self) { try bad.validate() }
    }
}
