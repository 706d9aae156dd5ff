import Foundation
import HeraldPushCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// `herald-push`: app verification by silent push. Each `push.verification` job is decided in
/// PostgreSQL (``PushStore/prepare``: re-entrancy, dead tokens, the per-device rate limit);
/// a fresh secret is hashed and recorded (`sending`) before the provider call, pushed with
/// the receipt through APNs, FCM or the dev outbox, and the answer is kept per device token.
public struct PushHandler: JobHandler {
    public let configuration: PushConfiguration
    let hasher: SecretHasher
    let apns: PushProvider
    let fcm: PushProvider
    /// One provider per platform: each a chain of one.
    let chains: [PushVerificationJob.Platform: ProviderChain<PushMessage, InvalidToken>]
    let metrics = PushMetrics()

    public init(configuration: PushConfiguration, hasher: SecretHasher, apns: PushProvider, fcm: PushProvider) {
        self.configuration = configuration
        self.hasher = hasher
        self.apns = apns
        self.fcm = fcm
        self.chains = [.apns: ProviderChain(channel: "push", providers: [apns]), .fcm: ProviderChain(channel: "push", providers: [fcm])]
    }

    /// The handler a `herald-push` process runs, from its configuration. `now` is the clock of
    /// the provider tokens (tests move it).
    public init(configuration: HeraldConfiguration, now: @escaping @Sendable () -> Date = Date.init) throws {
        let push = configuration.push
        let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
        switch push.delivery {
        case .outbox:
            let outbox = OutboxPushProvider(outbox: DevOutboxDelivery(configuration: configuration.outbox), payloadKey: push.apns.payloadKey)
            self.init(configuration: push, hasher: hasher, apns: outbox, fcm: outbox)
        case .live:
            let apnsTokens = try push.apns.key.isEmpty ? nil : APNsTokenCache(
                pem: push.apns.key, keyID: push.apns.keyID, teamID: push.apns.teamID,
                refreshInterval: TimeInterval(push.apns.jwtRefreshSeconds), now: now)
            let fcmTokens = try push.fcm.serviceAccount.isEmpty ? nil : FCMAccessTokenCache(
                account: ServiceAccount(json: push.fcm.serviceAccount), endpoint: push.fcm.tokenEndpoint,
                http: ProviderHTTP.client, timeout: .milliseconds(Int64(push.fcm.timeoutMilliseconds)), now: now)
            self.init(configuration: push, hasher: hasher,
                      apns: try APNsProvider(configuration: push.apns, tokens: apnsTokens),
                      fcm: FCMProvider(configuration: push.fcm, payloadKey: push.apns.payloadKey, tokens: fcmTokens))
        }
    }

    public func handle(_ job: PushVerificationJob, context: JobContext) async throws -> JobOutcome {
        var jobLogger = context.logger
        jobLogger[metadataKey: "receipt"] = "\(job.receipt)"
        jobLogger[metadataKey: "platform"] = "\(job.platform.rawValue)"
        jobLogger[metadataKey: "device_token"] = "\(PushTokens.hint(job.deviceToken))"
        let logger = jobLogger
        let tokenHash = PushTokens.hash(platform: job.platform, token: job.deviceToken)
        let ttl = job.timeoutSeconds ?? configuration.secretTTLSeconds
        let secret = SecretGenerator.token(bytes: 32)
        let request = PushStore.Request(
            receipt: job.receipt, messageID: context.envelope.messageID, platform: job.platform.rawValue,
            environment: job.environment.rawValue, appID: job.appID, tokenHash: tokenHash, tokenHint: PushTokens.hint(job.deviceToken),
            hash: hasher.hash(secret, context: PushVerifier.hashContext(receipt: job.receipt)), ttlSeconds: ttl,
            rateMax: configuration.rateLimitMax, rateWindowSeconds: configuration.rateLimitWindowSeconds, ownerKey: context.ownerKey)

        switch try await PushStore.prepare(request, client: context.database, logger: logger) {
        case .send(let uncertain):
            if uncertain { logger.warning("an earlier try of this receipt may have reached the provider; pushing a fresh secret") }
        case .refused(let reason):
            logger.notice("push refused", metadata: ["reason": "\(reason)"])
            return .rejected(reason, events: [event("push.refused", job, reason: reason)])
        case .done(let state):
            logger.info("receipt already decided", metadata: ["state": "\(state.rawValue)"])
            switch state {
            case .sent: return .completed(events: [event("push.sent", job)])
            case .sending, .retrying, .failed, .refused: return .rejected("already \(state.rawValue)")
            }
        case .busy:
            throw JobFailure.transient("receipt_in_progress")
        case .invalid(let reason):
            // Never pushed to a device (or app) the receipt was not made for.
            throw JobFailure.invalid(reason)
        }

        let expiresAt = Date().addingTimeInterval(TimeInterval(min(ttl, configuration.apns.expirationSeconds)))
        let message = PushMessage(receipt: job.receipt, secret: secret, deviceToken: job.deviceToken, platform: job.platform,
                                  environment: job.environment, appID: job.appID, expiresAt: expiresAt, messageID: context.envelope.messageID)
        let chain = chains[job.platform]!
        let delivery = await chain.send(message, context: DeliveryContext(logger: logger, database: context.database))
        let provider = delivery.attempts.last?.provider ?? chain.providers[0].name
        let (receipt, attempts, database) = (job.receipt, delivery.attempts, context.database)
        return try await delivery.settle(in: context, accepted: {
            .finished(.completed(events: [event("push.sent", job, provider: provider, providerMessageID: delivery.providerMessageID)])) {
                try await PushStore.sent(receipt, tokenHash: tokenHash, delivery: attempts, client: database, logger: logger)
            }
        }, refused: { _ in
            guard let invalid = delivery.answer?.detail else {
                let reason = "provider_rejected:\(provider):\(delivery.attempts.last?.errorCode ?? "-")"
                return .finished(.rejected(reason, events: [event("push.failed", job, provider: provider, reason: reason)])) {
                    try await PushStore.failed(receipt, reason: reason, delivery: attempts, client: database, logger: logger)
                }
            }
            return tokenInvalid(job, invalid, provider: provider, tokenHash: tokenHash, attempts: attempts, database: database, logger: logger)
        }, failed: { _ in
            let reason = "\(provider): \(delivery.attempts.last?.errorCode ?? "-")"
            return .retry(reason) { try await PushStore.retrying(receipt, reason: reason, delivery: attempts, client: database, logger: logger) }
        })
    }

    /// APNs or FCM says the device token is dead: counted, logged (with a hint at the other
    /// APNs environment for a bad token), recorded with the token, and `push.token.invalid`.
    private func tokenInvalid(_ job: PushVerificationJob, _ invalid: InvalidToken, provider: String, tokenHash: String,
                              attempts: [DeliveryAttempt], database: PostgresClient, logger: Logger) -> DeliveryEnd {
        metrics.tokenInvalid(provider, invalid.reason)
        var metadata: Logger.Metadata = ["provider": "\(provider)", "reason": "\(invalid.reason.rawValue)", "detail": "\(invalid.detail)"]
        if job.platform == .apns, invalid.reason == .badDeviceToken {
            // Apple's most common cause: a sandbox (development build) token sent to the
            // production host, or the reverse. Recorded with the environment we used.
            metadata["environment"] = "\(job.environment.rawValue)"
            logger.warning("APNs: bad device token; is it a token of the other environment (sandbox/production)?", metadata: metadata)
        } else {
            logger.notice("device token is invalid", metadata: metadata)
        }
        let recorded = job.platform == .apns && invalid.reason == .badDeviceToken ? "\(invalid.detail) (sent to \(job.environment.rawValue))" : invalid.detail
        let event = OutgoingEvent(name: "push.token.invalid", payload: PushTokenInvalidEvent(
            receipt: job.receipt, deviceToken: job.deviceToken, platform: job.platform.rawValue, environment: job.environment.rawValue,
            appID: job.appID, provider: provider, reason: invalid.reason.rawValue, detail: invalid.detail, invalidSince: invalid.since?.iso8601Milliseconds))
        let receipt = job.receipt
        return .finished(.rejected("token_invalid:\(invalid.reason.rawValue)", events: [event])) {
            try await PushStore.tokenInvalid(receipt, tokenHash: tokenHash, invalid: invalid, recorded: recorded, delivery: attempts, client: database, logger: logger)
        }
    }

    /// Out of attempts: the receipt ends `failed` with the runner's reason, its secret void,
    /// and `push.failed` tells the front API, all with the ledger's `dead`.
    public func exhausted(_ job: PushVerificationJob, reason: String, context: JobContext) -> JobOutcome {
        let (receipt, messageID, platform, environment, appID) = (job.receipt, context.envelope.messageID, job.platform.rawValue, job.environment.rawValue, job.appID)
        let tokenHash = PushTokens.hash(platform: job.platform, token: job.deviceToken)
        return .rejected(reason, events: [event("push.failed", job, reason: reason)]) { connection, logger in
            try await PushStore.exhausted(receipt, messageID: messageID, platform: platform, environment: environment, appID: appID,
                                          tokenHash: tokenHash, reason: reason, on: connection, logger: logger)
        }
    }

    private func event(_ name: String, _ job: PushVerificationJob, provider: String? = nil, providerMessageID: String? = nil, reason: String? = nil) -> OutgoingEvent {
        OutgoingEvent(name: name, payload: PushEvent(
            receipt: job.receipt, platform: job.platform.rawValue, environment: job.environment.rawValue, appID: job.appID,
            deviceToken: PushTokens.hint(job.deviceToken), provider: provider, providerMessageID: providerMessageID, reason: reason))
    }
}

/// Payload of `push.sent`, `push.failed` and `push.refused` (the token as a hint).
struct PushEvent: Encodable {
    var receipt: String
    var platform: String
    var environment: String
    var appID: String
    var deviceToken: String
    var provider: String?
    var providerMessageID: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case receipt, platform, environment, provider, reason
        case appID = "app_id", deviceToken = "device_token_hint", providerMessageID = "provider_message_id"
    }
}

/// Payload of `push.token.invalid`: the full token, so the front API can stop using it.
struct PushTokenInvalidEvent: Encodable {
    var receipt: String
    var deviceToken: String
    var platform: String
    var environment: String
    var appID: String
    var provider: String
    var reason: String
    var detail: String
    var invalidSince: String?

    enum CodingKeys: String, CodingKey {
        case receipt, platform, environment, provider, reason, detail
        case deviceToken = "device_token", appID = "app_id", invalidSince = "invalid_since"
    }
}
