import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// `herald-push` against local HTTP/2 TLS servers that speak Apple's provider API and check
/// every request (the JWT's signature with the public key, headers, path, payload): delivery,
/// every answer APNs gives, the provider token's reuse and refresh, and the host per environment.
@Suite(.needsServers) struct PushAPNsTests {
    @Test func aPushIsDeliveredWithEveryHeaderAndItsAPNsIDRecorded() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let job = push.job(1, timeout: 120)
            let started = Date()
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }

            #expect(push.production.violations.isEmpty, "\(push.production.violations)")
            #expect(push.sandbox.requestCount == 0)
            let request = try #require(push.production.requests.first)
            #expect(push.production.requestCount == 1)
            #expect(request.path == "/3/device/\(job.deviceToken)")
            #expect(request.header("apns-push-type") == "background")
            #expect(request.header("apns-priority") == "5")
            #expect(request.header("apns-topic") == job.appID)
            let expiration = try #require(request.header("apns-expiration").flatMap(Int.init))
            #expect(expiration >= Int(started.timeIntervalSince1970) + 100 && expiration <= Int(Date().timeIntervalSince1970) + 120)
            let apnsID = try #require(request.header("apns-id"))
            #expect(request.payloadBytes < 4096)
            let aps = request.payload["aps"] as? [String: String]
            #expect(aps?["content-available"] == "1")
            let (receipt, secret) = try #require(push.apnsSecrets(job.deviceToken).first)
            #expect(receipt == job.receipt)
            #expect(secret.count >= 43, "256 bits of secret")

            let row = try #require(try await push.verification(job.receipt))
            #expect(row.state == "sent")
            #expect(row.provider == "apns")
            #expect(row.providerMessageID == apnsID, "the echoed apns-id is recorded")
            #expect(row.httpStatus == 200)
            let health = try #require(try await push.health(job.deviceToken))
            #expect(health.status == "valid")
            #expect(health.pushes == 1)
            let events = try await push.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["push.sent"])
            #expect(events.first?.1["provider_message_id"] as? String == apnsID)
            #expect(events.first?.1["receipt"] as? String == job.receipt)
            try await worker.stop()
        }
    }

    @Test func eachJobGoesToTheHostOfItsEnvironment() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start()
            let sandboxJob = push.job(1, environment: .sandbox)
            let productionJob = push.job(2, environment: .production)
            let ids = [try await harness.enqueue(sandboxJob), try await harness.enqueue(productionJob)]
            try await eventually("both delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }
            #expect(push.sandbox.requests.map(\.token) == [sandboxJob.deviceToken])
            #expect(push.sandbox.requests.first?.authority.hasPrefix("localhost") == true)
            #expect(push.production.requests.map(\.token) == [productionJob.deviceToken])
            #expect(push.production.requests.first?.authority.hasPrefix("127.0.0.1") == true)
            try await worker.stop()
        }
    }

    @Test func unregisteredMarksTheTokenInvalidSinceAPNsTimestampAndLaterJobsCostNoPush() async throws {
        try await withHarness() { harness in
            let since: Int64 = 1_790_000_000_000
            let push = try await PushFixture(harness) { _ in .init(status: 410, reason: "Unregistered", timestamp: since) }
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("rejected") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(try await harness.ledger(id)?.1 == 1, "never retried")
            let row = try #require(try await push.verification(job.receipt))
            #expect(row.state == "failed")
            #expect(row.secretStatus == "void")
            #expect(row.httpStatus == 410)
            let health = try #require(try await push.health(job.deviceToken))
            #expect(health.status == "invalid")
            #expect(health.reason == "unregistered")
            #expect(health.invalidSince == Date(timeIntervalSince1970: TimeInterval(since) / 1000))
            let events = try await push.events.take(atLeast: 1)
            #expect(events.first?.0 == "push.token.invalid")
            #expect(events.first?.1["device_token"] as? String == job.deviceToken)
            #expect(events.first?.1["reason"] as? String == "unregistered")
            #expect(events.first?.1["provider"] as? String == "apns")
            // Event timestamps have milliseconds, like every event's (docs/wire-contract.md).
            #expect(events.first?.1["invalid_since"] as? String == "2026-09-21T14:13:20.000Z")
            #expect((events.first?.1["occurred_at"] as? String)?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil)

            // The dead token costs no further push: refused before any provider call.
            let again = push.job(1)
            let againID = try await harness.enqueue(again)
            try await eventually("refused") { try await harness.ledger(againID)?.0 == "rejected" }
            #expect(push.production.requestCount == 1)
            #expect(try await push.verification(again.receipt)?.reason == "token_invalid")

            // A registration older than APNs's timestamp changes nothing; one after it makes the token valid.
            let verification = try HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
            #expect(try await !verification.deviceTokenRegistered(platform: .apns, token: job.deviceToken,
                                                                   at: Date(timeIntervalSince1970: TimeInterval(since) / 1000 - 60), logger: harness.logger))
            let registered = try await HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
                .deviceTokenRegistered(platform: .apns, token: job.deviceToken, at: Date(timeIntervalSince1970: TimeInterval(since) / 1000 + 60),
                                       logger: harness.logger)
            #expect(registered)
            push.production.respond { _ in .ok }
            let third = push.job(1)
            let thirdID = try await harness.enqueue(third)
            try await eventually("delivered") { try await harness.ledger(thirdID)?.0 == "completed" }
            #expect(push.production.requestCount == 2)
            #expect(try await push.health(job.deviceToken)?.status == "valid")
            try await worker.stop()
        }
    }

    @Test func badDeviceTokenAndNotForTopicAreInvalidNeverRetriedAndTheEnvironmentIsRecorded() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let bad = push.job(1, environment: .sandbox)
            let wrongTopic = push.job(2)
            push.production.respond { _ in .init(status: 400, reason: "DeviceTokenNotForTopic") }
            push.sandbox.respond { _ in .init(status: 400, reason: "BadDeviceToken") }
            let worker = try await push.start()
            let ids = [try await harness.enqueue(bad), try await harness.enqueue(wrongTopic)]
            try await eventually("both rejected") { try await harness.statuses(ids).values.filter { $0 == "rejected" }.count == 2 }
            for id in ids { #expect(try await harness.ledger(id)?.1 == 1) }
            #expect(push.sandbox.requestCount == 1)
            #expect(push.production.requestCount == 1)
            let badHealth = try #require(try await push.health(bad.deviceToken))
            #expect(badHealth.status == "invalid")
            #expect(badHealth.reason == "bad_device_token")
            #expect(badHealth.detail == "BadDeviceToken (sent to sandbox)", "the environment is recorded: a sandbox/production mix-up shows")
            #expect(badHealth.environment == "sandbox")
            let topicHealth = try #require(try await push.health(wrongTopic.deviceToken))
            #expect(topicHealth.reason == "bad_device_token")
            #expect(topicHealth.detail?.hasPrefix("DeviceTokenNotForTopic") == true)
            let events = try await push.events.take(atLeast: 2)
            #expect(events.count == 2)
            #expect(events.allSatisfy { $0.0 == "push.token.invalid" })
            try await worker.stop()
        }
    }

    @Test func aBadDeviceTokenIsRefusedInItsEnvironmentButPushedInTheOther() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            push.sandbox.respond { _ in .init(status: 400, reason: "BadDeviceToken") }
            let worker = try await push.start()
            // A production build's token sent as sandbox: invalid there.
            let first = try await harness.enqueue(push.job(1, environment: .sandbox))
            try await eventually("rejected") { try await harness.ledger(first)?.0 == "rejected" }
            let again = try await harness.enqueue(push.job(1, environment: .sandbox))
            try await eventually("refused") { try await harness.ledger(again)?.0 == "rejected" }
            #expect(push.sandbox.requestCount == 1, "no second push to the environment that refused it")
            // The front API fixes the environment: pushed, and the token is valid again.
            let fixed = push.job(1, environment: .production)
            let fixedID = try await harness.enqueue(fixed)
            try await eventually("delivered") { try await harness.ledger(fixedID)?.0 == "completed" }
            let health = try #require(try await push.health(fixed.deviceToken))
            #expect(health.status == "valid")
            #expect(health.environment == "production")
            #expect(health.reason == nil)
            try await worker.stop()
        }
    }

    @Test func anExpiredProviderTokenIsSignedAgainOnceAndThePushRetried() async throws {
        try await withHarness() { harness in
            let first = LockedBox<String?>(nil)
            let push = try await PushFixture(harness) { request in
                let refused = first.withLock { value -> Bool in
                    if value == nil { value = request.jwt }
                    return value == request.jwt
                }
                return refused ? .init(status: 403, reason: "ExpiredProviderToken") : .ok
            }
            let (worker, handler) = try await push.startWithHandler()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("delivered") { try await harness.ledger(id)?.0 == "completed" }
            #expect(try await harness.ledger(id)?.1 == 1, "retried within the same attempt")
            let requests = push.production.requests
            #expect(requests.count == 2)
            #expect(requests[0].jwt != requests[1].jwt)
            #expect((handler.apns as? APNsProvider)?.tokens?.signatureCount == 2)
            try await worker.stop()
        }
    }

    @Test func aProviderTokenRefusedEvenFreshIsRetriedLaterThenDeadLettered() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness) { _ in .init(status: 403, reason: "InvalidProviderToken") }
            let worker = try await push.start()
            let job = push.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("dead-lettered") { try await harness.ledger(id)?.0 == "dead" }
            #expect(push.production.requestCount == 2 * harness.configuration.runner.maxAttempts, "one refresh per attempt")
            let letters = try await harness.drainDeadLetters(.push)
            guard let reason = letters.first?.properties.deadLetterStamp?.reason else {
                Issue.record("no reason on the dead letter")
                return
            }
            #expect(reason.contains("apns_provider_token_refused:InvalidProviderToken"), "\(reason)")
            // Out of attempts: the receipt ends `failed` with the dead letter's reason.
            let row = try await push.verification(job.receipt)
            #expect(row?.state == "failed")
            #expect(row?.reason == reason)
            try await worker.stop()
        }
    }

    @Test func tooManyRequestsAndServerErrorsAreRetriedUntilDelivered() async throws {
        try await withHarness() { harness in
            let counts = LockedBox<[String: Int]>([:])
            let push = try await PushFixture(harness)
            let throttled = push.job(1)
            let failing = push.job(2)
            push.production.respond { request in
                let n = counts.withLock { value -> Int in
                    value[request.token, default: 0] += 1
                    return value[request.token]!
                }
                if request.token == throttled.deviceToken, n == 1 { return .init(status: 429, reason: "TooManyRequests") }
                if request.token == failing.deviceToken, n == 1 { return .init(status: 500, reason: "InternalServerError") }
                if request.token == failing.deviceToken, n == 2 { return .init(status: 503, reason: "ServiceUnavailable") }
                return .ok
            }
            let worker = try await push.start()
            let ids = [try await harness.enqueue(throttled), try await harness.enqueue(failing)]
            try await eventually("both delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }
            #expect(try await harness.ledger(ids[0])?.1 == 2)
            #expect(try await harness.ledger(ids[1])?.1 == 3)
            #expect(try await push.verification(failing.receipt)?.sends == 3)
            // Each try pushed a fresh secret; only the last one confirms.
            let secrets = push.apnsSecrets(failing.deviceToken)
            #expect(Set(secrets.map(\.1)).count == 3)
            #expect(try await push.confirm(failing.receipt, secrets[0].1) == .mismatch)
            #expect(try await push.confirm(failing.receipt, secrets[2].1) == .verified(appID: failing.appID, platform: .apns))
            // Every try's call is in the attempt log, and `heraldctl verify show-push` prints them.
            let calls = try await AttemptLog.push.read(failing.receipt, client: harness.database, logger: harness.logger)
            #expect(calls.map(\.result) == [.transient, .transient, .accepted])
            #expect(calls.prefix(2).map(\.httpStatus) == [500, 503])
            let shown = try JSONSerialization.jsonObject(with: Data(try await runHeraldctl(
                ["verify", "show-push", failing.receipt, "--output", "json"], namespace: harness.namespace).utf8)) as? [String: Any]
            let printed = try #require(shown?["provider_calls"] as? [[String: Any]])
            #expect(printed.map { $0["result"] as? String } == ["transient", "transient", "accepted"])
            #expect(printed.allSatisfy { $0["provider"] as? String == "apns" })
            try await worker.stop()
        }
    }

    @Test func oneProviderTokenServesManyPushesAndIsSignedAgainWhenDue() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let (worker, handler) = try await push.startWithHandler { $0.amqp.prefetch = 64 }
            var ids: [String] = []
            for n in 0..<100 { ids.append(try await harness.enqueue(push.job(n))) }
            try await eventually(timeout: .seconds(60), "100 delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 100 }
            let requests = push.production.requests
            #expect(requests.count == 100)
            #expect(Set(requests.map(\.jwt)).count == 1, "one JWT for every request")
            let tokens = try #require((handler.apns as? APNsProvider)?.tokens)
            #expect(tokens.signatureCount == 1)
            #expect(push.production.connectionCount <= 2, "push.apns.connections")
            #expect(push.production.violations.isEmpty)

            // Past jwt_refresh_seconds, the next push carries a new token with a later iat.
            push.clock.advance(TimeInterval(harness.configuration.push.apns.jwtRefreshSeconds + 1))
            let later = try await harness.enqueue(push.job(200))
            try await eventually("delivered") { try await harness.ledger(later)?.0 == "completed" }
            let last = try #require(push.production.requests.last)
            #expect(last.jwt != requests[0].jwt)
            #expect(last.issuedAt >= requests[0].issuedAt + harness.configuration.push.apns.jwtRefreshSeconds)
            #expect(tokens.signatureCount == 2)
            try await worker.stop()
        }
    }

    @Test func aSecondConnectionOpensOnlyWhenTheFirstOnesStreamsAreBusy() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness) { _ in .init(delay: .milliseconds(300)) }
            let worker = try await push.start {
                $0.amqp.prefetch = 16
                $0.push.apns.connections = 2
                $0.push.apns.streamsPerConnection = 4
            }
            // One at a time: one connection.
            let first = try await harness.enqueue(push.job(0))
            try await eventually("delivered") { try await harness.ledger(first)?.0 == "completed" }
            #expect(push.production.connectionCount == 1)
            // Sixteen at once: four streams on the first, the rest on the second.
            var ids: [String] = []
            for n in 1...16 { ids.append(try await harness.enqueue(push.job(n))) }
            try await eventually("16 delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 16 }
            #expect(push.production.connectionCount == 2)
            #expect(push.production.peakConcurrentStreams > 1, "several streams in flight on one connection")
            #expect(Set(push.production.requests.map(\.connection)).count == 2)
            try await worker.stop()
        }
    }

    @Test func backgroundPushesToOneDeviceAreRateLimitedAndRefusedWithAnEvent() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let worker = try await push.start {
                $0.push.rateLimitMax = 2
                $0.push.rateLimitWindowSeconds = 3600
            }
            var ids: [String] = []
            var jobs: [PushVerificationJob] = []
            for _ in 0..<3 {
                let job = push.job(7)
                jobs.append(job)
                ids.append(try await harness.enqueue(job))
                try await eventually("decided") {
                    let status = try await harness.ledger(ids.last!)?.0
                    return status == "completed" || status == "rejected"
                }
            }
            #expect(try await harness.statuses(ids) == [ids[0]: "completed", ids[1]: "completed", ids[2]: "rejected"])
            #expect(push.production.requestCount == 2)
            #expect(try await push.verification(jobs[2].receipt)?.reason == "rate_limited:device")
            let events = try await push.events.take(atLeast: 3)
            #expect(events.count == 3)
            let refused = events.first { $0.0 == "push.refused" }
            #expect(refused?.1["reason"] as? String == "rate_limited:device")
            #expect(refused?.1["receipt"] as? String == jobs[2].receipt)
            try await worker.stop()
        }
    }
}

/// A value behind a lock, for responders.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}
