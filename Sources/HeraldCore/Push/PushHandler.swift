import Foundation
import Logging
import PostgresNIO

/// `herald-push`: app verification by silent push. Each `push.verification` job is decided in
/// PostgreSQL (``PushStore/prepare``: re-entrancy, dead tokens, the per-device rate limit);
/// a fresh secret is hashed and recorded (`sending`) before the provider call, pushed with
/// the receipt through APNs, FCM or the dev outbox, and the answer is kept per device token.
public struct PushHandler: JobHandler {
    public let configuration: PushConfiguration
    let hasher: SecretHasher
    let apns: any PushProvider
    let fcm: any PushProvider
    let metrics = PushMetrics()

    public init(configuration: PushConfiguration, hasher: SecretHasher, apns: any PushProvider, fcm: any PushProvider) {
        self.configuration = configuration
        self.hasher = hasher
        self.apns = apns
        self.fcm = fcm
    }

    /// The handler a `herald-push` process runs, from its configuration. `now` is the clock of
    /// the provider tokens (tests move it).
    public init(configuration: HeraldConfiguration, now: @escaping @Sendable () -> Date = Date.init) throws {
        let push = configuration.push
        let hasher = SecretHasher(keyRing: try configuration.secrets.keyRing())
        switch push.delivery {
        case .outbox:
            let outbox = OutboxPushProvider(spool: OutboxSpool(directory: configuration.outbox.directory),
                                            delay: .milliseconds(configuration.outbox.delayMilliseconds),
                                            payloadKey: push.apns.payloadKey, metrics: PushMetrics())
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
            logger.info("receipt already decided", metadata: ["state": "\(state)"])
            switch state {
            case "sent": return .completed(events: [event("push.sent", job)])
            default: return .rejected("already \(state)")
            }
        case .busy:
            throw JobFailure.transient("receipt_in_progress")
        }

        let expiresAt = Date().addingTimeInterval(TimeInterval(min(ttl, configuration.apns.expirationSeconds)))
        let message = PushMessage(receipt: job.receipt, secret: secret, deviceToken: job.deviceToken, platform: job.platform,
                                  environment: job.environment, appID: job.appID, expiresAt: expiresAt, messageID: context.envelope.messageID)
        let provider = job.platform == .apns ? apns : fcm
        let response = await provider.send(message, logger: logger, database: context.database)
        let database = context.database
        switch response.answer {
        case .delivered(let id):
            logger.info("push accepted by the provider", metadata: ["provider": "\(provider.name)", "provider_message_id": "\(id ?? "-")"])
            try await SMSHandler.holdingForDatabase(logger) {
                try await PushStore.sent(job.receipt, tokenHash: tokenHash, provider: provider.name, providerMessageID: id,
                                         httpStatus: response.httpStatus, client: database, logger: logger)
            }
            return .completed(events: [event("push.sent", job, provider: provider.name, providerMessageID: id)])
        case .invalidToken(let reason, let detail, let since):
            metrics.tokenInvalid(provider.name, reason)
            var metadata: Logger.Metadata = ["provider": "\(provider.name)", "reason": "\(reason.rawValue)", "detail": "\(detail)"]
            if job.platform == .apns, reason == .badDeviceToken {
                // Apple's most common cause: a sandbox (development build) token sent to the
                // production host, or the reverse. Recorded with the environment we used.
                metadata["environment"] = "\(job.environment.rawValue)"
                logger.warning("APNs: bad device token; is it a token of the other environment (sandbox/production)?", metadata: metadata)
            } else {
                logger.notice("device token is invalid", metadata: metadata)
            }
            let recorded = job.platform == .apns && reason == .badDeviceToken ? "\(detail) (sent to \(job.environment.rawValue))" : detail
            try await SMSHandler.holdingForDatabase(logger) {
                try await PushStore.tokenInvalid(job.receipt, tokenHash: tokenHash, provider: provider.name, reason: reason, detail: recorded,
                                                 since: since, httpStatus: response.httpStatus, client: database, logger: logger)
            }
            let invalid = OutgoingEvent(name: "push.token.invalid", payload: PushTokenInvalidEvent(
                receipt: job.receipt, deviceToken: job.deviceToken, platform: job.platform.rawValue, environment: job.environment.rawValue,
                appID: job.appID, provider: provider.name, reason: reason.rawValue, detail: detail, invalidSince: since?.iso8601))
            return .rejected("token_invalid:\(reason.rawValue)", events: [invalid])
        case .rejected(let why), .credentialsRefused(let why):
            let reason = "provider_rejected:\(provider.name):\(why)"
            logger.warning("push refused by the provider", metadata: ["provider": "\(provider.name)", "reason": "\(why)"])
            try await SMSHandler.holdingForDatabase(logger) {
                try await PushStore.failed(job.receipt, provider: provider.name, reason: reason, httpStatus: response.httpStatus, client: database, logger: logger)
            }
            return .rejected(reason, events: [event("push.failed", job, provider: provider.name, reason: reason)])
        case .transient, .timeout:
            let why: String
            if case .transient(let text) = response.answer { why = text } else { why = "timeout" }
            let reason = "\(provider.name): \(why)"
            logger.warning("push provider failed; will retry", metadata: ["provider": "\(provider.name)", "reason": "\(why)"])
            let uncertain = response.answer == .timeout
            try await SMSHandler.holdingForDatabase(logger) {
                try await PushStore.retrying(job.receipt, provider: provider.name, reason: reason, httpStatus: response.httpStatus,
                                             uncertain: uncertain, client: database, logger: logger)
            }
            throw JobFailure.transient(reason)
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
