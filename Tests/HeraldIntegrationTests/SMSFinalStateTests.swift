import AMQP
import Foundation
import Glibc
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// States that tell the truth: a verification whose job was dead-lettered after its tries ends
/// `failed` with its code closed and `sms.failed` emitted, and a verification id is bound to
/// the number and purpose it was made for.
@Suite(.needsServers) struct SMSFinalStateTests {
    /// The dead letter's reason (its `x-herald-dead-letter` stamp).
    static func reason(_ letter: AMQPDelivery?) -> String? {
        letter?.properties.deadLetterStamp?.reason
    }

    /// What `heraldctl verify show-sms` prints, as JSON.
    static func shown(_ id: String, _ harness: Harness) async throws -> [String: Any] {
        let output = try await runHeraldctl(["verify", "show-sms", id, "--output", "json"], namespace: harness.namespace)
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    @Test func aJobOutOfAttemptsEndsFailedWithItsCodeClosedAndAnEvent() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await StubHTTPServer { _ in .init(status: 503, body: #"{"code":20503,"status":503}"#) }
            let worker = try await sms.start {
                SMSProviderTests.twilio(&$0, twilio)
                $0.sms.providers = [.twilio]
            }
            let job = harness.sms(1)
            let id = try await harness.enqueue(job)
            try await eventually("dead after its tries") { try await harness.ledger(id)?.0 == "dead" }

            let letters = try await harness.drainDeadLetters(.sms)
            #expect(letters.count == 1)
            let reason = try #require(Self.reason(letters.first))
            #expect(reason.hasPrefix("gave up after 3 attempts: "), "\(reason)")
            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.state == "failed")
            #expect(row.reason == reason)

            // Each try carried a fresh code to the provider; not even the last one verifies now.
            let bodies = twilio.requests.compactMap { $0.form["Body"] }
            #expect(bodies.count == 3)
            let last = try #require(SMSFixture.code(in: bodies.last!, length: 6))
            #expect(try await sms.verify(job.verificationID, last) == .notFound)

            let events = try await sms.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["sms.failed"])
            #expect(events.first?.1["verification_id"] as? String == job.verificationID)
            #expect(events.first?.1["reason"] as? String == reason)
            #expect(events.first?.1["phone"] as? String == Redact.phone(job.phoneNumber))

            let shown = try await Self.shown(job.verificationID, harness)
            #expect(shown["state"] as? String == "failed")
            #expect(shown["reason"] as? String == reason)
            #expect(shown["code_status"] as? String == "failed")

            // The number is free again: the next request sends a fresh code at once.
            twilio.respond(with: SMSProviderTests.twilioCreated)
            let next = SMSVerificationJob(verificationID: "\(harness.namespace)-v1b", phoneNumber: job.phoneNumber, locale: "en")
            let nextID = try await harness.enqueue(next)
            try await eventually("sent") { try await harness.ledger(nextID)?.0 == "completed" }
            #expect(try await sms.verification(next.verificationID)?.state == "sent")
            try await worker.stop()
        }
    }

    @Test func aJobWhoseWorkerDiedEachTimeEndsFailedToo() async throws {
        // One attempt: the worker killed mid-send is the only one the job gets.
        try await withHarness(maxAttempts: 1) { harness in
            let sms = try await SMSFixture(harness)
            let first = try WorkerProcess("herald-sms", namespace: harness.namespace,
                                          environment: ["HERALD_OUTBOX_DELAY_MS": "5000", "HERALD_RUNNER_MAX_ATTEMPTS": "1"])
            try await first.waitUntilReady()
            let job = harness.sms(2)
            let id = try await harness.enqueue(job)
            try await eventually("at the provider") { try await sms.verification(job.verificationID)?.state == "sending" }
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5)) != nil)

            let second = try await sms.start()
            try await eventually(timeout: .seconds(30), "given up") { try await harness.ledger(id)?.0 == "dead" }
            let reason = try #require(Self.reason(try await harness.drainDeadLetters(.sms).first))
            #expect(reason.contains("the worker stopped each time"), "\(reason)")
            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.state == "failed")
            #expect(row.reason == reason)
            // The code that was on its way when the worker died is closed.
            let shown = try await Self.shown(job.verificationID, harness)
            #expect(shown["code_status"] as? String == "failed")
            #expect(try await sms.events.take(atLeast: 1).map(\.0) == ["sms.failed"])
            #expect(try await harness.outboxCount([id]) == 0, "given up without another send")
            try await second.stop()
        }
    }

    @Test func aVerificationIDReusedForAnotherNumberOrPurposeIsRefusedAndNotSent() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start()
            let job = harness.sms(3)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(sms.code(to: job.phoneNumber))

            var otherNumber = job
            otherNumber.phoneNumber = harness.phone(4)
            var otherPurpose = job
            otherPurpose.purpose = .mfaSignIn
            let ids = [try await harness.enqueue(otherNumber), try await harness.enqueue(otherPurpose)]
            try await eventually("both dead-lettered") { try await harness.statuses(ids).values.filter { $0 == "dead" }.count == 2 }
            let reasons = Set(try await harness.drainDeadLetters(.sms).compactMap(Self.reason))
            #expect(reasons == ["verification_id reused with a different phone_number", "verification_id reused with a different purpose"])

            // Nothing went to the other number, one SMS in all, and the first code still verifies.
            #expect(sms.delivered().count == 1)
            #expect(sms.delivered().allSatisfy { $0.to == job.phoneNumber })
            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.state == "sent")
            #expect(row.reason == nil)
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            #expect(try await sms.events.take(atLeast: 1).map(\.0) == ["sms.sent"])
            try await worker.stop()
        }
    }
}
