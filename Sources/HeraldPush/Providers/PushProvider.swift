import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// One silent push to hand to a provider.
public struct PushMessage: Sendable {
    public var receipt: String
    public var secret: Secret
    public var deviceToken: String
    public var platform: PushVerificationJob.Platform
    public var environment: PushVerificationJob.Environment
    public var appID: String
    /// After this, the push is worthless (the secret has expired): `apns-expiration`, FCM `ttl`.
    public var expiresAt: Date
    /// The job's message id.
    public var messageID: String

    public init(receipt: String, secret: Secret, deviceToken: String, platform: PushVerificationJob.Platform,
                environment: PushVerificationJob.Environment, appID: String, expiresAt: Date, messageID: String) {
        self.receipt = receipt
        self.secret = secret
        self.deviceToken = deviceToken
        self.platform = platform
        self.environment = environment
        self.appID = appID
        self.expiresAt = expiresAt
        self.messageID = messageID
    }
}

/// Why a device token is invalid: the `reason` label of `herald_push_tokens_invalid_total`.
public enum PushTokenReason: String, Sendable, CaseIterable {
    /// APNs 410 Unregistered, FCM UNREGISTERED (404).
    case unregistered
    /// APNs 400 BadDeviceToken or DeviceTokenNotForTopic.
    case badDeviceToken = "bad_device_token"
    /// FCM INVALID_ARGUMENT about the token.
    case invalidArgument = "invalid_argument"
}

/// How a provider answered one push.
public enum PushProviderAnswer: Sendable, Equatable {
    /// Accepted; APNs's `apns-id` or FCM's message name.
    case delivered(id: String?)
    /// The token is dead: mark it, emit `push.token.invalid`, never retry. `detail` is the
    /// provider's own reason (`Unregistered`, `DeviceTokenNotForTopic`, …), `since` APNs's
    /// 410 timestamp (the token is invalid unless registered again after it).
    case invalidToken(PushTokenReason, detail: String, since: Date?)
    /// Our provider credentials were refused (APNs 403 Expired/InvalidProviderToken, FCM 401):
    /// refresh them once and retry.
    case credentialsRefused(String)
    /// Refused for good for another reason (a bad topic, a payload too large): no retry.
    case rejected(String)
    /// Try again later (429, 5xx, unreachable).
    case transient(String)
    case timeout
}

/// A provider answer with the HTTP status it came with.
public struct PushProviderResponse: Sendable, Equatable {
    public var answer: PushProviderAnswer
    public var httpStatus: Int?

    public init(_ answer: PushProviderAnswer, httpStatus: Int? = nil) {
        self.answer = answer
        self.httpStatus = httpStatus
    }
}

/// What the chain carries besides a refusal's code when a device token is dead: mark it,
/// emit `push.token.invalid`, never retry. `detail` is the provider's own reason
/// (`Unregistered`, `DeviceTokenNotForTopic`, …), `since` APNs's 410 timestamp (the token is
/// invalid unless registered again after it).
public struct InvalidToken: Sendable, Equatable {
    public var reason: PushTokenReason
    public var detail: String
    public var since: Date?
}

extension PushProviderResponse {
    /// The answer as the provider chain takes it: our refused credentials (after the one
    /// refresh) and any other refusal are final; a dead token is a refusal with its detail.
    public var chainAnswer: ProviderAnswer<InvalidToken> {
        switch answer {
        case .delivered(let id): .accepted(id, httpStatus: httpStatus)
        case .invalidToken(let reason, let detail, let since):
            .refused(detail, httpStatus: httpStatus, detail: InvalidToken(reason: reason, detail: detail, since: since))
        case .credentialsRefused(let why), .rejected(let why): .refused(why, httpStatus: httpStatus)
        case .transient(let why): .next(why, httpStatus: httpStatus)
        case .timeout: .timeout
        }
    }
}

/// A way to deliver a silent push: APNs, FCM, the dev outbox. Implementations never log or
/// return the secret.
public typealias PushProvider = any DeliveryProvider<PushMessage, InvalidToken>
