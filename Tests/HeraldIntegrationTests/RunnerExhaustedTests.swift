import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Logging
import PostgresNIO
import Testing

/// The runner's side of ``JobHandler/exhausted(_:reason:context:)``: what a handler returns
/// for a job out of attempts commits with the ledger's `dead`, or not at all.
@Suite(.needsServers) struct RunnerExhaustedTests {
    /// Fails every try; out of attempts, writes a dev outbox row and emits `test.exhausted`,
    /// except for verification ids ending in `-declines`, whose write throws.
    struct GivesUpHandler: JobHandler {
        typealias Job = SMSVerificationJob

        func handle(_ job: SMSVerificationJob, context: JobContext) async throws -> JobOutcome {
            throw JobFailure.transient("provider answered 503")
        }

        func exhausted(_ job: SMSVerificationJob, reason: String, context: JobContext) -> JobOutcome {
            struct Payload: Encodable { var id: String; var reason: String; var attempt: Int }
            let (id, messageID, declines) = (job.verificationID, context.envelope.messageID, job.verificationID.hasSuffix("-declines"))
            let event = OutgoingEvent(name: "test.exhausted", payload: Payload(id: id, reason: reason, attempt: context.attempt))
            return .rejected(reason, events: [event]) { connection, logger in
                try await connection.query("""
                    INSERT INTO herald.dev_outbox (kind, message_id, job_type, recipient, body)
                    VALUES ('sms', \(messageID), 'test', 'nobody', '{}'::jsonb)
                    """, logger: logger)
                if declines { throw StoreError("nothing of this job left to end") }
            }
        }
    }

    @Test func theHandlersLastWordCommitsWithTheDeadRecordOrNotAtAll() async throws {
        try await withHarness() { harness in
            let events = try await EventTap(harness, channel: "test")
            let worker = try await harness.startRunner(.sms, GivesUpHandler())
            let ends = SMSVerificationJob(verificationID: "\(harness.namespace)-ends", phoneNumber: harness.phone(1))
            let declines = SMSVerificationJob(verificationID: "\(harness.namespace)-declines", phoneNumber: harness.phone(2))
            let ids = [try await harness.enqueue(ends), try await harness.enqueue(declines)]
            try await eventually("both dead") { try await harness.statuses(ids).values.filter { $0 == "dead" }.count == 2 }
            #expect(try await harness.drainDeadLetters(.sms).count == 2)

            // The write and the event of the first; neither of the second, whose write threw.
            #expect(try await harness.outboxCount([ids[0]]) == 1)
            #expect(try await harness.outboxCount([ids[1]]) == 0)
            let seen = try await events.take(atLeast: 1)
            #expect(seen.map(\.0) == ["test.exhausted"])
            #expect(seen.first?.1["id"] as? String == ends.verificationID)
            #expect((seen.first?.1["reason"] as? String)?.hasPrefix("gave up after 3 attempts: provider answered 503") == true)
            #expect(seen.first?.1["attempt"] as? Int == 3)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await events.take().isEmpty, "no event for the job whose write threw")
            try await worker.stop()
        }
    }
}
