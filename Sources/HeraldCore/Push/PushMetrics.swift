import Metrics

/// `herald-push`'s metrics (the contract in docs/operations.md).
public struct PushMetrics: Sendable {
    public init() {}

    /// `herald_push_provider_calls_total{provider,result}` (accepted, rejected, transient,
    /// timeout) and `herald_push_provider_duration_seconds{provider}`.
    public func providerCall(_ provider: String, answer: PushProviderAnswer, _ duration: Duration) {
        let result: String
        switch answer {
        case .delivered: result = "accepted"
        case .invalidToken, .rejected: result = "rejected"
        case .credentialsRefused, .transient: result = "transient"
        case .timeout: result = "timeout"
        }
        Counter(label: "herald_push_provider_calls_total", dimensions: [("provider", provider), ("result", result)]).increment()
        Metrics.Timer(label: "herald_push_provider_duration_seconds", dimensions: [("provider", provider)]).recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_push_tokens_invalid_total{provider,reason}`: unregistered, bad_device_token, invalid_argument.
    public func tokenInvalid(_ provider: String, _ reason: PushTokenReason) {
        Counter(label: "herald_push_tokens_invalid_total", dimensions: [("provider", provider), ("reason", reason.rawValue)]).increment()
    }
}
