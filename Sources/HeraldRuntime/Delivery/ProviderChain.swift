import Logging
import Tracing
import Metrics

/// The delivery pipeline of every channel: providers tried in order, the next on a failure,
/// none after a refusal (the recipient is the problem, not the provider). Every call is
/// recorded as a ``DeliveryAttempt`` and counted in one metrics family labelled by channel
/// and provider: `herald_provider_calls_total{channel,provider,result}` and
/// `herald_provider_duration_seconds{channel,provider}`.
public struct ProviderChain<Message: Sendable, Detail: Sendable & Equatable>: Sendable {
    public let channel: String
    public let providers: [any DeliveryProvider<Message, Detail>]

    /// `channel` is the metrics label (`sms`, `email`, `push`). At least one provider.
    public init(channel: String, providers: [any DeliveryProvider<Message, Detail>]) {
        precondition(!providers.isEmpty, "at least one \(channel) provider")
        self.channel = channel
        self.providers = providers
    }

    /// How a delivery through the chain ended.
    public struct Delivery: Sendable {
        public enum Outcome: Sendable, Equatable {
            case accepted
            /// `reason`: `provider:code`.
            case refused(reason: String)
            /// Every provider failed; `reason` names each one's failure.
            case failed(reason: String)
        }

        public var outcome: Outcome
        /// Every call made, in order.
        public var attempts: [DeliveryAttempt]
        /// The answer that decided it: the acceptance or the refusal (nil when every provider failed).
        public var answer: ProviderAnswer<Detail>?

        /// The provider that decided it.
        public var provider: String? { answer == nil ? nil : attempts.last?.provider }
        public var providerMessageID: String? { answer == nil ? nil : attempts.last?.providerMessageID }
        /// Some call may have delivered although it failed: a send after it is uncertain.
        public var uncertain: Bool { attempts.contains(where: \.uncertain) }
    }

    /// A cancelled send (the runner's drain timeout) calls no further provider: it fails with
    /// the calls made so far, and the job is requeued.
    public func send(_ message: Message, context: DeliveryContext) async -> Delivery {
        var attempts: [DeliveryAttempt] = []
        var failures: [String] = []
        for provider in providers {
            if Task.isCancelled {
                failures.append("cancelled before \(provider.name)")
                break
            }
            var call = context
            call.logger[metadataKey: "provider"] = "\(provider.name)"
            let started = ContinuousClock.now
            let (answer, attempt, elapsed) = await HeraldTracing.withSpan("send \(channel) \(provider.name)") { span in
                let answer = await provider.send(message, context: call)
                let elapsed = ContinuousClock.now - started
                let attempt = Self.attempt(provider.name, answer, elapsed)
                span?.updateAttributes { attributes in
                    attributes[TraceKey.channel] = channel
                    attributes[TraceKey.provider] = provider.name
                    attributes[TraceKey.providerResult] = attempt.result.rawValue
                    attributes[TraceKey.errorType] = attempt.errorCode
                }
                return (answer, attempt, elapsed)
            }
            attempts.append(attempt)
            record(attempt, elapsed)
            switch answer.disposition {
            case .accepted(let id):
                call.logger.info("\(channel) accepted by the provider", metadata: ["provider_message_id": "\(id ?? "-")"])
                return Delivery(outcome: .accepted, attempts: attempts, answer: answer)
            case .refused(let code):
                call.logger.warning("\(channel) refused by the provider", metadata: ["error_code": "\(code)"])
                return Delivery(outcome: .refused(reason: "\(provider.name):\(code)"), attempts: attempts, answer: answer)
            case .next(let code):
                failures.append("\(provider.name): \(code)")
                call.logger.warning("\(channel) provider failed; trying the next", metadata: ["error_code": "\(code)", "uncertain": "\(answer.uncertain)"])
            }
        }
        return Delivery(outcome: .failed(reason: "every provider failed (\(failures.joined(separator: "; ")))"), attempts: attempts, answer: nil)
    }

    static func attempt(_ provider: String, _ answer: ProviderAnswer<Detail>, _ elapsed: Duration) -> DeliveryAttempt {
        let milliseconds = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        var attempt = DeliveryAttempt(provider: provider, result: .accepted, httpStatus: answer.httpStatus, durationMilliseconds: milliseconds)
        switch answer.disposition {
        case .accepted(let id):
            attempt.providerMessageID = id
        case .refused(let code):
            attempt.result = .rejected
            attempt.errorCode = code
        case .next(let code):
            attempt.result = answer.uncertain ? .timeout : .transient
            attempt.errorCode = code
        }
        return attempt
    }

    private func record(_ attempt: DeliveryAttempt, _ elapsed: Duration) {
        Counter(label: "herald_provider_calls_total", dimensions: [("channel", channel), ("provider", attempt.provider), ("result", attempt.result.rawValue)]).increment()
        Metrics.Timer(label: "herald_provider_duration_seconds", dimensions: [("channel", channel), ("provider", attempt.provider)]).recordNanoseconds(elapsed.nanoseconds)
    }
}
