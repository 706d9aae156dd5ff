import HeraldRuntime
import Metrics

/// `herald-email`'s own metrics (documented in docs/operations.md).
public struct EmailMetrics: Sendable {
    public init() {}

    /// `herald_email_decisions_total{decision}`: sent, refused, no_account, failed, retrying, duplicate.
    public func decision(_ decision: String) {
        Counter(label: "herald_email_decisions_total", dimensions: [("decision", decision)]).increment()
    }
}
