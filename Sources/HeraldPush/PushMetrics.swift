import HeraldRuntime
import Metrics

/// `herald-push`'s metrics (the contract in docs/operations.md).
public struct PushMetrics: Sendable {
    public init() {}

    /// `herald_push_tokens_invalid_total{provider,reason}`: unregistered, bad_device_token, invalid_argument.
    public func tokenInvalid(_ provider: String, _ reason: PushTokenReason) {
        Counter(label: "herald_push_tokens_invalid_total", dimensions: [("provider", provider), ("reason", reason.rawValue)]).increment()
    }
}
