import HeraldRuntime
import Metrics

/// `herald-email`'s own metrics (documented in docs/operations.md).
public struct EmailMetrics: Sendable {
    public init() {}

    /// `herald_email_decisions_total{decision}`: sent, refused, no_account, failed, retrying, duplicate.
    public func decision(_ decision: String) {
        Counter(label: "herald_email_decisions_total", dimensions: [("decision", decision)]).increment()
    }

    /// `herald_email_refusals_total{reason}`: rate_limited:email_address|email_domain|ip|global.
    public func refusal(_ reason: String) {
        Counter(label: "herald_email_refusals_total", dimensions: [("reason", reason)]).increment()
    }

    /// `herald_email_code_checks_total{result}`: checks of one-time email codes (``EmailCodeVerifier``):
    /// verified, wrong_code, expired, too_many_attempts, already_used, not_found, locked_out.
    public func codeCheck(_ result: String) {
        Counter(label: "herald_email_code_checks_total", dimensions: [("result", result)]).increment()
    }
}
