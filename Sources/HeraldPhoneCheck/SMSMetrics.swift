import Metrics

/// `herald-sms`'s own metrics (documented in docs/operations.md). Those counted where codes are
/// checked (``PhoneVerifier``, in herald-api too) are here; the worker's own are an extension in
/// HeraldPhone (`SMSMetrics+Worker.swift`).
public struct SMSMetrics: Sendable {
    public init() {}

    /// `herald_sms_lockouts_total`: a number and purpose locked after too many wrong codes
    /// (`sms.guessing.*`), counted by the check API's process (``PhoneVerifier``). The worker's
    /// refused sends to a locked pair are `herald_sms_refusals_total{reason="locked_out"}`.
    public func lockout() {
        Counter(label: "herald_sms_lockouts_total").increment()
    }

    /// `herald_sms_verified_total{region}`: codes checked right (``PhoneVerifier``, in the process
    /// that checks them): over `herald_sms_deliveries_total{status="delivered"}`, the conversion.
    public func verified(region: String) {
        Counter(label: "herald_sms_verified_total", dimensions: [("region", region)]).increment()
    }
}
