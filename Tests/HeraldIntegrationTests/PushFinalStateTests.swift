import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldPushCheck
@testable import HeraldRuntime
import HeraldStubs
import Testing

/// States that tell the truth: a receipt whose job was dead-lettered after its tries ends
/// `failed` with its secret void and `push.failed` emitted, and a receipt is bound to the
/// device, environment and app it was made for.
@Suite(.needsServers) struct PushFinalStateTests {
    @Test func aJobOutOfAttemptsEndsFailedWithItsSecretVoidAndAnEvent() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness) { _ in .init(status: 503, reason: "ServiceUnavailable") }
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("dead after its tries") { try await harness.ledger(id)?.0 == "dead" }

            let letters = try await harness.drainDeadLetters(.push)
            #expect(letters.count == 1)
            let reason = try #require(SMSFinalStateTests.reason(letters.first))
            #expect(reason.hasPrefix("gave up after 3 attempts: "), "\(reason)")
            let row = try #require(try await push.verification(job.receipt))
            #expect(row.state == "failed")
            #expect(row.secretStatus == "void")
            #expect(row.reason == reason)
            #expect(row.sends == 3)

            // Each try pushed a fresh secret; none confirms now, not even the last.
            let secrets = push.apnsSecrets(job.deviceToken)
            #expect(secrets.count == 3)
            #expect(try await push.confirm(job.receipt, try #require(secrets.last).1) == .notFound)

            let events = try await push.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["push.failed"])
            #expect(events.first?.1["receipt"] as? String == job.receipt)
            #expect(events.first?.1["reason"] as? String == reason)
            #expect(events.first?.1["device_token_hint"] as? String == PushTokens.hint(job.deviceToken))

            let output = try await runHeraldctl(["verify", "show-push", job.receipt, "--output", "json"], namespace: harness.namespace)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            #expect(shown["state"] as? String == "failed")
            #expect(shown["secret_status"] as? String == "void")
            #expect(shown["reason"] as? String == reason)
            try await worker.stop()
        }
    }

    @Test func aReceiptReusedForAnotherDeviceEnvironmentOrAppIsRefusedAndNotPushed() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("pushed") { try await harness.ledger(id)?.0 == "completed" }
            let (_, secret) = try #require(push.apnsSecrets(job.deviceToken).first)

            var otherDevice = job
            otherDevice.deviceToken = push.token(2)
            var otherEnvironment = job
            otherEnvironment.environment = .sandbox
            var otherApp = job
            otherApp.appID = "com.example.other"
            var otherPlatform = push.job(3, platform: .fcm)
            otherPlatform.receipt = job.receipt
            let ids = [try await harness.enqueue(otherDevice), try await harness.enqueue(otherEnvironment),
                       try await harness.enqueue(otherApp), try await harness.enqueue(otherPlatform)]
            try await eventually("all dead-lettered") { try await harness.statuses(ids).values.filter { $0 == "dead" }.count == 4 }
            let reasons = Set(try await harness.drainDeadLetters(.push).compactMap(SMSFinalStateTests.reason))
            #expect(reasons == ["receipt reused with a different device_token", "receipt reused with a different environment",
                                "receipt reused with a different app_id", "receipt reused with a different platform"])
            #expect(!reasons.contains { $0.contains(push.token(2)) }, "a reason names the field, never its value")

            // Nothing pushed but the first; the receipt and its secret are untouched.
            #expect(push.production.requestCount == 1)
            #expect(push.sandbox.requestCount == 0)
            #expect(push.fcm.messages.isEmpty)
            let row = try #require(try await push.verification(job.receipt))
            #expect(row.state == "sent")
            #expect(row.sends == 1)
            #expect(try await push.confirm(job.receipt, secret) == .verified(appID: job.appID, platform: .apns))
            #expect(try await push.events.take(atLeast: 1).map(\.0) == ["push.sent"])
            try await worker.stop()
        }
    }
}
