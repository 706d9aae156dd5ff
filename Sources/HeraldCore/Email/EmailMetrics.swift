import Metrics

/// `herald-email`'s own metrics (documented in docs/operations.md).
public struct EmailMetrics: Sendable {
    public init() {}

    /// `herald_email_provider_calls_total{provider,result}` (accepted, rejected, transient,
    /// timeout) and `herald_email_provider_duration_seconds{provider}`.
    public func providerCall(_ provider: String, result: String, _ duration: Duration) {
        Counter(label: "herald_email_provider_calls_total", dimensions: [("provider", provider), ("result", result)]).increment()
        Metrics.Timer(label: "herald_email_provider_duration_seconds", dimensions: [("provider", provider)]).recordNanoseconds(duration.nanoseconds)
    }

    /// `herald_email_decisions_total{decision}`: sent, refused, no_account, failed, retrying, duplicate.
    public func decision(_ decision: String) {
        Counter(label: "herald_email_decisions_total", dimensions: [("decision", decision)]).increment()
    }
}
