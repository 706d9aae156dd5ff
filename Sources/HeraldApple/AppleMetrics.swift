import HeraldRuntime
import Metrics

/// `herald-apple`'s metrics (the contract in docs/operations.md).
public struct AppleMetrics: Sendable {
    public init() {}

    /// `herald_apple_jobs_total{operation,result}`: token stored/failed/uncertain/retried,
    /// revoke revoked/nothing/failed/retried.
    public func finished(_ operation: AppleOperation, _ result: String) {
        Counter(label: "herald_apple_jobs_total", dimensions: [("operation", operation.rawValue), ("result", result)]).increment()
    }
}
