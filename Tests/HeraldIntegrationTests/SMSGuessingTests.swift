import AMQP
import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
@testable import HeraldWire
import PostgresNIO
import Testing

/// The guessing lockout (`sms.guessing.*`): wrong codes counted per number across codes and
/// purposes, against the real broker and database. The lock's end is moved through the database
/// (`locked_until`), never waited for.
@Suite(.needsServers) struct SMSGuessingTests {
    /// Sends `job` and returns the code the stand-in phone received (nil for a test number).
    private func send(_ job: SMSVerificationJob, _ harness: Harness, _ sms: SMSFixture) async throws -> String {
        let id = try await harness.enqueue(job)
        try await eventually("decided \(job.verificationID)") { ["completed", "rejected"].contains(try await harness.ledger(id)?.0 ?? "") }
        return try #require(sms.delivered().last { $0.verificationID == job.verificationID }.flatMap { SMSFixture.code(in: $0.text, length: 6) })
    }

    private func wrong(_ code: String) -> String { code == "000000" ? "000001" : "000000" }

    /// Ends the lock of `phone` as if its time had passed.
    private func endLock(_ phone: String, _ harness: Harness) async throws {
        try await harness.database.query("""
            UPDATE herald.sms_guess_failures SET locked_until = now() - interval '1 second' WHERE phone_number = \(phone)
            """, logger: harness.logger)
    }

    @Test func theEleventhWrongGuessAcrossCodesIsRefusedEvenWithAFreshCodeAndASuccessResetsIt() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                $0.sms.resendIntervalSeconds = 0
                $0.sms.guessing.lockoutSeconds = 600
            }
            let phone = harness.phone(21)
            func job(_ n: Int, force: Bool = false) -> SMSVerificationJob {
                SMSVerificationJob(verificationID: "\(harness.namespace)-g\(n)", phoneNumber: phone, locale: "en", forceResend: force)
            }
            // Code 1: five wrong guesses kill it (failures 1-5).
            let first = try await send(job(1), harness, sms)
            for left in (0..<5).reversed() {
                #expect(try await sms.verify(job(1).verificationID, wrong(first)) == .wrongCode(attemptsLeft: left))
            }
            // Code 2: a new code does not start the count again (failures 6-9).
            let second = try await send(job(2), harness, sms)
            for left in (1..<5).reversed() {
                #expect(try await sms.verify(job(2).verificationID, wrong(second)) == .wrongCode(attemptsLeft: left))
            }
            // A fresh code (force_resend replaces the pending one, its tries back to 5); the 10th
            // failure locks the number.
            let fresh = try await send(job(3, force: true), harness, sms)
            guard case .lockedOut(let seconds) = try await sms.verify(job(3).verificationID, wrong(fresh)) else {
                Issue.record("the 10th failure did not lock")
                return
            }
            #expect((1...600).contains(seconds))
            // The 11th guess, even of the right fresh code, is refused; so is a new code.
            guard case .lockedOut = try await sms.verify(job(3).verificationID, fresh) else {
                Issue.record("the right code was checked while the number was locked")
                return
            }
            let refusedID = try await harness.enqueue(job(4))
            try await eventually("refused") { try await harness.ledger(refusedID)?.0 == "rejected" }
            #expect(try await sms.verification(job(4).verificationID)?.reason == "locked_out")
            let events = try await sms.events.take(atLeast: 4)
            #expect(events.contains { $0.0 == "sms.refused" && $0.1["reason"] as? String == "locked_out" })

            // After the lock the right code still works, and the success forgets every failure:
            // nine wrong guesses on a new code do not lock again.
            try await endLock(phone, harness)
            #expect(try await sms.verify(job(3).verificationID, fresh) == .verified(phoneNumber: phone, purpose: .signIn))
            let after = try await send(job(5), harness, sms)
            for left in (0..<5).reversed() {
                #expect(try await sms.verify(job(5).verificationID, wrong(after)) == .wrongCode(attemptsLeft: left))
            }
            let last = try await send(job(6), harness, sms)
            for left in (1..<5).reversed() {
                #expect(try await sms.verify(job(6).verificationID, wrong(last)) == .wrongCode(attemptsLeft: left))
            }
            #expect(try await sms.verify(job(6).verificationID, last) == .verified(phoneNumber: phone, purpose: .signIn))
            try await worker.stop()
        }
    }

    @Test func theLockDoublesAtEachFurtherLockUpToItsCap() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                $0.sms.resendIntervalSeconds = 0
                // One pending code sent again each round: the budget of paid sends out of the way.
                $0.sms.fallback.maxPaidSends = 10
                $0.sms.guessing.maxFailures = 2
                $0.sms.guessing.lockoutSeconds = 100
                $0.sms.guessing.maxLockoutSeconds = 300
            }
            let phone = harness.phone(22)
            var locks: [Int] = []
            for round in 0..<4 {
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-d\(round)", phoneNumber: phone, locale: "en")
                let code = try await send(job, harness, sms)
                #expect(try await sms.verify(job.verificationID, wrong(code)) == .wrongCode(attemptsLeft: 4))
                guard case .lockedOut(let seconds) = try await sms.verify(job.verificationID, wrong(code)) else {
                    Issue.record("round \(round) did not lock")
                    return
                }
                locks.append(seconds)
                try await endLock(phone, harness)
            }
            // 100, 200, then capped at 300 (each within a second of its length, read after the lock began).
            #expect(zip(locks, [100, 200, 300, 300]).allSatisfy { $0.0 <= $0.1 && $0.0 >= $0.1 - 2 }, "\(locks)")
            try await worker.stop()
        }
    }

    @Test func testNumbersCountTheirWrongTriesAcrossRequestsAndLockToo() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let phone = harness.phone(23)
            let worker = try await sms.start {
                $0.sms.testNumbers = [phone: "424242"]
                $0.sms.guessing.maxFailures = 7
            }
            func request(_ n: Int) async throws -> String {
                let id = "\(harness.namespace)-t\(n)"
                let message = try await harness.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: phone))
                try await eventually("decided \(n)") { ["completed", "rejected"].contains(try await harness.ledger(message)?.0 ?? "") }
                return id
            }
            // A second request for the pending fixed code no longer gives 5 fresh tries.
            let first = try await request(0)
            for left in [4, 3, 2] { #expect(try await sms.verify(first, "000000") == .wrongCode(attemptsLeft: left)) }
            let second = try await request(1)
            #expect(try await sms.verify(second, "000000") == .wrongCode(attemptsLeft: 1))
            #expect(try await sms.verify(second, "000000") == .wrongCode(attemptsLeft: 0))
            // The code is dead; a new one gets its own tries, but the number's count goes on: 7 locks.
            let third = try await request(2)
            #expect(try await sms.verify(third, "000000") == .wrongCode(attemptsLeft: 4))
            guard case .lockedOut = try await sms.verify(third, "000000") else {
                Issue.record("the test number did not lock")
                return
            }
            #expect(try await sms.verify(third, "424242") != .verified(phoneNumber: phone, purpose: .signIn))
            let refused = try await request(3)
            #expect(try await sms.verification(refused)?.reason == "locked_out")
            try await worker.stop()
        }
    }

    /// One count per number, whatever the purpose (issue 34): wrong codes of sign_in and of
    /// mfa_sign_in add up; the lock refuses a check of either and a send of any purpose, and a
    /// test number's fixed code gets no more tries in another purpose.
    @Test func wrongCodesOfEveryPurposeCountTogetherAndTheLockHoldsForEach() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let phone = harness.phone(24), test = harness.phone(25)
            let worker = try await sms.start {
                $0.sms.resendIntervalSeconds = 0
                $0.sms.guessing.maxFailures = 3
                $0.sms.guessing.lockoutSeconds = 600
                $0.sms.testNumbers = [test: "424242"]
            }
            func job(_ n: Int, _ purpose: SMSVerificationJob.Purpose, to number: String? = nil) -> SMSVerificationJob {
                SMSVerificationJob(verificationID: "\(harness.namespace)-p\(n)", phoneNumber: number ?? phone, locale: "en", purpose: purpose)
            }
            let signIn = try await send(job(1, .signIn), harness, sms)
            let mfa = try await send(job(2, .mfaSignIn), harness, sms)
            #expect(try await sms.verify(job(1, .signIn).verificationID, wrong(signIn)) == .wrongCode(attemptsLeft: 4))
            #expect(try await sms.verify(job(2, .mfaSignIn).verificationID, wrong(mfa)) == .wrongCode(attemptsLeft: 4))
            // The third failure, in either purpose, locks the number for all of them.
            guard case .lockedOut = try await sms.verify(job(1, .signIn).verificationID, wrong(signIn)) else {
                Issue.record("three failures over two purposes did not lock")
                return
            }
            guard case .lockedOut = try await sms.verify(job(2, .mfaSignIn).verificationID, mfa) else {
                Issue.record("the mfa_sign_in code was checked while the number was locked by sign_in's failures")
                return
            }
            let enroll = job(3, .mfaEnroll)
            let id = try await harness.enqueue(enroll)
            try await eventually("decided") { ["completed", "rejected"].contains(try await harness.ledger(id)?.0 ?? "") }
            #expect(try await sms.verification(enroll.verificationID)?.reason == "locked_out")

            // A test number: two wrong tries of its fixed code as sign_in, one as mfa_enroll: locked.
            let testSignIn = job(4, .signIn, to: test), testEnroll = job(5, .mfaEnroll, to: test)
            for request in [testSignIn, testEnroll] {
                let message = try await harness.enqueue(request)
                try await eventually("decided \(request.verificationID)") { ["completed", "rejected"].contains(try await harness.ledger(message)?.0 ?? "") }
            }
            #expect(try await sms.verify(testSignIn.verificationID, "000000") == .wrongCode(attemptsLeft: 4))
            #expect(try await sms.verify(testSignIn.verificationID, "000000") == .wrongCode(attemptsLeft: 3))
            guard case .lockedOut = try await sms.verify(testEnroll.verificationID, "000000") else {
                Issue.record("the test number's mfa_enroll code had tries of its own")
                return
            }
            guard case .lockedOut = try await sms.verify(testEnroll.verificationID, "424242") else {
                Issue.record("the fixed code was checked while the test number was locked")
                return
            }
            // A success forgets the count of every purpose.
            try await endLock(phone, harness)
            let fresh = try await send(SMSVerificationJob(verificationID: "\(harness.namespace)-p6", phoneNumber: phone, locale: "en", purpose: .signIn, forceResend: true), harness, sms)
            #expect(try await sms.verify("\(harness.namespace)-p6", fresh) == .verified(phoneNumber: phone, purpose: .signIn))
            #expect(try await harness.database.query("SELECT count(*)::bigint FROM herald.sms_guess_failures WHERE phone_number = \(phone)", logger: harness.logger)
                .decode(Int.self).first { _ in true } == 0)
            try await worker.stop()
        }
    }
}
