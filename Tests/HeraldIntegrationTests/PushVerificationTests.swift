import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldPushCheck
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// App verification end to end: a `push.verification` job through the queue, the push at the
/// local APNs server, the test playing the app (receipt and secret from the payload), and the
/// confirm API.
@Suite(.needsServers) struct PushVerificationTests {
    @Test func theSecretConfirmsOnceNotWhenWrongAndNotForAnotherReceipt() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1)
            let other = push.job(2)
            let ids = [try await harness.enqueue(job), try await harness.enqueue(other)]
            try await eventually("delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }
            let (receipt, secret) = try #require(push.apnsSecrets(job.deviceToken).first)
            let (_, otherSecret) = try #require(push.apnsSecrets(other.deviceToken).first)

            #expect(try await push.confirm(receipt, String(secret.dropLast()) + (secret.last == "A" ? "B" : "A")) == .mismatch)
            #expect(try await push.confirm(receipt, otherSecret) == .mismatch, "a secret is bound to its receipt")
            #expect(try await push.confirm(receipt, "") == .mismatch)
            #expect(try await push.confirm(receipt, secret) == .verified(appID: job.appID, platform: .apns), "a wrong try does not spend it")
            #expect(try await push.confirm(receipt, secret) == .alreadyUsed)
            #expect(try await push.confirm("\(harness.namespace)-nope", secret) == .notFound)
            #expect(try await push.verification(receipt)?.secretStatus == "verified")
            try await worker.stop()
        }
    }

    @Test func theSecretExpiresWithTheJobsTimeout() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1, timeout: 1)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            let (receipt, secret) = try #require(push.apnsSecrets(job.deviceToken).first)
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await push.confirm(receipt, secret) == .expired)
            #expect(try await push.confirm(receipt, secret) == .expired)
            try await worker.stop()
        }
    }

    @Test func ofManyConcurrentConfirmationsExactlyOneSucceeds() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            let (receipt, secret) = try #require(push.apnsSecrets(job.deviceToken).first)
            let results = try await withThrowingTaskGroup(of: PushVerifier.Result.self) { group in
                for _ in 0..<50 { group.addTask { try await push.confirm(receipt, secret) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0 == .verified(appID: job.appID, platform: .apns) }.count == 1)
            #expect(results.filter { $0 == .alreadyUsed }.count == 49)
            try await worker.stop()
        }
    }

    @Test func aReceiptIsPushedOnceWhateverTheDuplicates() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            // The same message again (the ledger), and the same receipt under a new message id.
            _ = try await harness.enqueue(job, messageID: id)
            let again = try await harness.enqueue(job)
            try await eventually("decided") { try await harness.ledger(again)?.0 == "completed" }
            try await Task.sleep(for: .milliseconds(300))
            #expect(push.production.requestCount == 1)
            #expect(try await push.verification(job.receipt)?.sends == 1)
            try await worker.stop()
        }
    }

    @Test func malformedJobsAreDeadLetteredWithTheirReason() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let bodies = [
                (#"{"version":1,"receipt":"r1","device_token":"not-hex!","platform":"apns","environment":"production","app_id":"com.example"}"#, "hexadecimal"),
                (#"{"version":1,"receipt":"r2","device_token":"abcd","platform":"webpush","environment":"production","app_id":"com.example"}"#, "platform"),
                (#"{"version":1,"receipt":"r3","device_token":"abcd","platform":"apns","app_id":"com.example"}"#, "environment"),
            ]
            for (n, (body, _)) in bodies.enumerated() {
                try await harness.client.publishRaw(body: Array(body.utf8), routingKey: "push.verification",
                                                    properties: JobEnvelope(messageID: "\(harness.namespace)-bad\(n)", typeName: PushVerificationJob.typeName).properties())
            }
            var letters: [AMQPDelivery] = []
            try await eventually("dead-lettered") {
                letters += try await harness.drainDeadLetters(.push)
                return letters.count == bodies.count
            }
            for (body, expected) in bodies {
                let letter = letters.first { $0.body == Array(body.utf8) }
                guard let reason = letter?.properties.deadLetterStamp?.reason else {
                    Issue.record("no reason for \(expected)")
                    continue
                }
                #expect(reason.contains(expected), "\(reason)")
            }
            #expect(push.production.requestCount == 0)
            try await worker.stop()
        }
    }

    @Test func theDevOutboxIsTheStandInDevice() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start { $0.push.delivery = .outbox }
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            let text = try String(contentsOfFile: push.spool + "/push.jsonl", encoding: .utf8)
            let line = try #require(text.split(separator: "\n").first)
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
            let payload = try #require(try JSONSerialization.jsonObject(with: Data(record["payload"]!.utf8)) as? [String: Any])
            let inner = try #require(payload["herald"] as? [String: String])
            #expect(inner["receipt"] == job.receipt)
            let secret = try #require(inner["secret"])
            #expect(try await push.confirm(job.receipt, secret) == .verified(appID: job.appID, platform: .apns))
            // The outbox table keeps no secret.
            let rows = try await harness.database.query("SELECT body::text FROM herald.dev_outbox WHERE message_id = \(id)", logger: harness.logger)
            for try await body in rows.decode(String.self) { #expect(!body.contains(secret)) }
            #expect(push.production.requestCount == 0)
            try await worker.stop()
        }
    }
}
