import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
import Testing

/// `herald-push` against a local server that speaks FCM HTTP v1 and Google's OAuth2 token
/// endpoint (it verifies the RS256 assertion with the service account's public key).
@Suite(.needsServers) struct PushFCMTests {
    @Test func aDataOnlyHighPriorityMessageIsDeliveredAndConfirmed() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1, platform: .fcm, timeout: 120)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            #expect(push.fcm.violations.isEmpty, "\(push.fcm.violations)")
            let message = try #require(push.fcm.messages.first)
            #expect(message.project == "test-project")
            #expect(message.token == job.deviceToken)
            #expect(message.android["priority"] == "HIGH")
            #expect(message.android["restricted_package_name"] == job.appID)
            #expect(message.android["ttl"].map { $0.hasSuffix("s") } == true)
            let (receipt, secret) = try #require(push.fcmSecrets(job.deviceToken).first)
            #expect(receipt == job.receipt)
            let row = try #require(try await push.verification(job.receipt))
            #expect(row.provider == "fcm")
            #expect(row.providerMessageID?.hasPrefix("projects/test-project/messages/") == true)
            #expect(try await push.confirm(job.receipt, secret) == .verified(appID: job.appID, platform: .fcm))
            #expect(push.production.requestCount == 0)
            try await worker.stop()
        }
    }

    @Test func theAccessTokenIsCachedUntilNearItsExpiry() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            // The provider's clock starts in the past, so that moving it to near the token's expiry
            // still gives assertions the token endpoint accepts (it checks iat and exp against its own clock).
            push.clock.advance(-3400)
            let (worker, handler) = try await push.startWithHandler()
            var ids: [String] = []
            for n in 0..<20 { ids.append(try await harness.enqueue(push.job(n, platform: .fcm))) }
            try await eventually("20 delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 20 }
            #expect(push.fcm.tokenRequests == 1, "one OAuth2 token for 20 messages")
            #expect(Set(push.fcm.messages.map(\.accessToken)).count == 1)
            let cache = try #require((handler.fcm as? FCMProvider)?.tokens)
            #expect(await cache.fetches == 1)

            // Five minutes before its expiry (3600 s), the token is fetched again.
            push.clock.advance(3600 - 299)   // now 299 s before the expiry
            let later = try await harness.enqueue(push.job(50, platform: .fcm))
            try await eventually("delivered") { try await harness.ledger(later)?.0 == "completed" }
            #expect(push.fcm.tokenRequests == 2)
            try await worker.stop()
        }
    }

    @Test func aRefusedAccessTokenIsFetchedAgainOnceAndTheMessageRetried() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let first = try await harness.enqueue(push.job(1, platform: .fcm))
            try await eventually("delivered") { try await harness.ledger(first)?.0 == "completed" }
            push.fcm.revokeTokens()
            let second = try await harness.enqueue(push.job(2, platform: .fcm))
            try await eventually("delivered") { try await harness.ledger(second)?.0 == "completed" }
            #expect(try await harness.ledger(second)?.1 == 1)
            #expect(push.fcm.tokenRequests == 2)
            try await worker.stop()
        }
    }

    @Test func unregisteredAndInvalidArgumentMarkTheTokenInvalid() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let gone = push.job(1, platform: .fcm)
            let bad = push.job(2, platform: .fcm)
            push.fcm.respond { message in message.token == gone.deviceToken ? .unregistered : .invalidArgument }
            let worker = try await push.start()
            let ids = [try await harness.enqueue(gone), try await harness.enqueue(bad)]
            try await eventually("both rejected") { try await harness.statuses(ids).values.filter { $0 == "rejected" }.count == 2 }
            #expect(try await push.health(gone.deviceToken, platform: .fcm)?.reason == "unregistered")
            #expect(try await push.health(bad.deviceToken, platform: .fcm)?.reason == "invalid_argument")
            #expect(try await push.health(bad.deviceToken, platform: .fcm)?.status == "invalid")
            let events = try await push.events.take(atLeast: 2)
            #expect(events.count == 2)
            #expect(events.allSatisfy { $0.0 == "push.token.invalid" && $0.1["provider"] as? String == "fcm" })
            #expect(Set(events.compactMap { $0.1["device_token"] as? String }) == [gone.deviceToken, bad.deviceToken])
            try await worker.stop()
        }
    }
}
