import Foundation
import Logging
import PostgresNIO

/// How an email provider answered one message.
public enum EmailProviderAnswer: Sendable, Equatable {
    case accepted(providerMessageID: String?)
    /// Refused for good (SMTP 5xx, an HTTP 4xx about the message): no other provider, no retry.
    case rejected(code: String)
    /// Try the next provider, then retry later (SMTP 4xx, HTTP 5xx/429, unreachable).
    case transient(code: String)
    /// No answer in time: it may have been delivered.
    case timeout
}

/// What a provider call may use besides the message: the job's logger and the database
/// (the dev outbox records there).
public struct EmailSendContext: Sendable {
    public var logger: Logger
    public var database: PostgresClient
}

/// A way to deliver an email. Implementations never log or return the bodies (they carry the link).
public protocol EmailProvider: Sendable {
    /// `smtp`, `http_mail`, `outbox`.
    var name: String { get }
    func send(_ message: EmailMessage, context: EmailSendContext) async -> EmailProviderAnswer
}

/// Tries providers in order, as ``SMSDispatcher`` does: the next on a transient answer or a
/// timeout; a rejection ends the attempt. Every call is counted in the metrics.
public struct EmailDispatcher: Sendable {
    public let providers: [any EmailProvider]

    public init(providers: [any EmailProvider]) {
        precondition(!providers.isEmpty, "at least one email provider")
        self.providers = providers
    }

    public enum Result: Sendable, Equatable {
        case accepted(provider: String, providerMessageID: String?, uncertain: Bool)
        case rejected(provider: String, code: String)
        case failed(reason: String, uncertain: Bool)
    }

    public func send(_ message: EmailMessage, context: EmailSendContext, metrics: EmailMetrics) async -> Result {
        var reasons: [String] = []
        var uncertain = false
        for provider in providers {
            let started = ContinuousClock.now
            var logger = context.logger
            logger[metadataKey: "provider"] = "\(provider.name)"
            let answer = await provider.send(message, context: EmailSendContext(logger: logger, database: context.database))
            let elapsed = ContinuousClock.now - started
            switch answer {
            case .accepted(let id):
                metrics.providerCall(provider.name, result: "accepted", elapsed)
                logger.info("email accepted by the provider")
                return .accepted(provider: provider.name, providerMessageID: id, uncertain: uncertain)
            case .rejected(let code):
                metrics.providerCall(provider.name, result: "rejected", elapsed)
                logger.warning("email rejected by the provider", metadata: ["error_code": "\(code)"])
                return .rejected(provider: provider.name, code: code)
            case .transient(let code):
                metrics.providerCall(provider.name, result: "transient", elapsed)
                reasons.append("\(provider.name): \(code)")
                logger.warning("email provider failed; trying the next", metadata: ["error_code": "\(code)"])
            case .timeout:
                metrics.providerCall(provider.name, result: "timeout", elapsed)
                reasons.append("\(provider.name): timeout")
                uncertain = true
                logger.warning("email provider timed out; trying the next")
            }
        }
        return .failed(reason: "every provider failed (\(reasons.joined(separator: "; ")))", uncertain: uncertain)
    }
}
