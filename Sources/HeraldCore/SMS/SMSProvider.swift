import Foundation
import Logging
import PostgresNIO

/// One SMS to hand to a provider.
public struct SMSMessage: Sendable {
    public var to: String
    public var text: Secret
    /// The text with the code masked, for anything people read (the dev outbox).
    public var maskedText: String
    public var encoding: SMSEncoding
    public var verificationID: String
    /// The job's message id.
    public var messageID: String
}

/// How a provider answered one call.
public enum SMSProviderAnswer: Sendable, Equatable {
    case accepted(providerMessageID: String?)
    /// The provider refused this message for good (an invalid number, a blocked destination):
    /// no other provider is tried, no retry.
    case rejected(code: String)
    /// Try the next provider, then retry later (5xx, 429, our credentials refused, unreachable).
    case transient(code: String)
    case timeout
}

/// A provider's answer with its HTTP status, as recorded in `herald.sms_send_attempts`.
public struct SMSProviderResponse: Sendable, Equatable {
    public var answer: SMSProviderAnswer
    public var httpStatus: Int?

    public init(_ answer: SMSProviderAnswer, httpStatus: Int? = nil) {
        self.answer = answer
        self.httpStatus = httpStatus
    }
}

/// What a provider call may use besides the message: the job's logger (message and
/// correlation ids) and the worker's database (the dev outbox records there).
public struct SMSSendContext: Sendable {
    public var logger: Logger
    public var database: PostgresClient
}

/// A way to send an SMS. Implementations never log or return the message text.
public protocol SMSProvider: Sendable {
    /// `twilio`, `kannel`, `webhook`, `outbox`.
    var name: String { get }
    func send(_ message: SMSMessage, context: SMSSendContext) async -> SMSProviderResponse
}

/// Tries providers in order: the next on a transient answer or a timeout; a rejection ends
/// the attempt (the number is the problem, not the provider). Every call is recorded.
public struct SMSDispatcher: Sendable {
    public let providers: [any SMSProvider]

    public init(providers: [any SMSProvider]) {
        precondition(!providers.isEmpty, "at least one SMS provider")
        self.providers = providers
    }

    public enum Result: Sendable {
        case accepted([SMSStore.Attempt])
        case rejected(code: String, [SMSStore.Attempt])
        case failed(reason: String, [SMSStore.Attempt])
    }

    public func send(_ message: SMSMessage, context: SMSSendContext, metrics: SMSMetrics?) async -> Result {
        let logger = context.logger
        var attempts: [SMSStore.Attempt] = []
        var reasons: [String] = []
        for provider in providers {
            let started = ContinuousClock.now
            var call = context
            call.logger[metadataKey: "provider"] = "\(provider.name)"
            let response = await provider.send(message, context: call)
            let elapsed = ContinuousClock.now - started
            let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
            var attempt = SMSStore.Attempt(provider: provider.name, result: .accepted, httpStatus: response.httpStatus, durationMilliseconds: milliseconds)
            let log = call.logger
            switch response.answer {
            case .accepted(let id):
                attempt.providerMessageID = id
                attempts.append(attempt)
                metrics?.providerCall(provider.name, result: "accepted", elapsed)
                log.info("SMS accepted by the provider", metadata: ["provider_message_id": "\(id ?? "-")"])
                return .accepted(attempts)
            case .rejected(let code):
                attempt.result = .rejected
                attempt.errorCode = code
                attempts.append(attempt)
                metrics?.providerCall(provider.name, result: "rejected", elapsed)
                log.warning("SMS rejected by the provider", metadata: ["error_code": "\(code)"])
                return .rejected(code: "\(provider.name):\(code)", attempts)
            case .transient(let code):
                attempt.result = .transient
                attempt.errorCode = code
                reasons.append("\(provider.name): \(code)")
                metrics?.providerCall(provider.name, result: "transient", elapsed)
                log.warning("SMS provider failed; trying the next", metadata: ["error_code": "\(code)"])
            case .timeout:
                attempt.result = .timeout
                attempt.errorCode = "timeout"
                reasons.append("\(provider.name): timeout")
                metrics?.providerCall(provider.name, result: "timeout", elapsed)
                log.warning("SMS provider timed out; trying the next")
            }
            attempts.append(attempt)
        }
        return .failed(reason: "every provider failed (\(reasons.joined(separator: "; ")))", attempts)
    }
}
