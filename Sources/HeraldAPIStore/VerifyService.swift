import Foundation
import HeraldRuntime

/// A Twilio Verify Service (`VA…`): the settings its verifications are made with.
public struct VerifyService: Sendable, Equatable {
    public var sid: String
    public var friendlyName: String
    /// Digits of its codes, 4 to 10 (Twilio's `CodeLength`).
    public var codeLength: Int
    /// How long a verification stays pending after its last send (Twilio: 10 minutes).
    public var ttlSeconds: Int
    /// Sends of one verification (Twilio: 5); the next answers 60203.
    public var maxSendAttempts: Int
    /// Checks of one verification (Twilio: 5); the next answers 60202.
    public var maxCheckAttempts: Int
    /// Refuse numbers libphonenumber types as fixed lines (60205) instead of sending.
    public var skipSMSToLandlines: Bool
    public var doNotShareWarning: Bool
    public var createdAt: Date
    public var updatedAt: Date

    /// The settings of a new Service, as Twilio's defaults.
    public struct Settings: Sendable, Equatable {
        public var friendlyName: String
        public var codeLength = 6
        public var ttlSeconds = 600
        public var maxSendAttempts = 5
        public var maxCheckAttempts = 5
        public var skipSMSToLandlines = false
        public var doNotShareWarning = false
        public init(friendlyName: String) { self.friendlyName = friendlyName }
    }
}

/// A Twilio Verify Verification (`VE…`) as stored.
public struct VerifyVerification: Sendable, Equatable {
    /// `herald.verify_verifications.status`.
    public enum Status: String, StoredState {
        case pending, approved, canceled, failed, expired
        case maxAttemptsReached = "max_attempts_reached"
    }

    public struct SendAttempt: Sendable, Equatable {
        /// `VL…`: also the verification id and message id of the Herald SMS job that carried it.
        public var sid: String
        public var channel: String
        public var time: Date
    }

    public var sid: String
    public var serviceSid: String
    public var to: String
    public var channel: String
    public var locale: String?
    public var status: Status
    public var checks: Int
    public var createdAt: Date
    public var updatedAt: Date
    public var expiresAt: Date
    public var sendAttempts: [SendAttempt]

    /// The send that carries the code to check: the last one.
    public var currentAttempt: SendAttempt? { sendAttempts.last }
    /// An email verification (`Channel=email`: `To` is an address, the code herald-email's).
    public var byEmail: Bool { to.contains("@") }
}
