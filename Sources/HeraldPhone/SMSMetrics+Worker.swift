import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Metrics

/// The worker's counters (herald-sms): its decisions, refusals, sends, receipts and fallbacks.
extension SMSMetrics {
    /// `herald_sms_decisions_total{decision}`: sent, reused, test, refused, failed, retrying.
    public func decision(_ decision: String) {
        Counter(label: "herald_sms_decisions_total", dimensions: [("decision", decision)]).increment()
    }

    /// `herald_sms_refusals_total{reason}`: region, rate_limited:phone|prefix|ip|global|resend, locked_out.
    public func refusal(_ reason: String) {
        Counter(label: "herald_sms_refusals_total", dimensions: [("reason", reason)]).increment()
    }

    /// `herald_sms_region_sends_total{region}`: SMS handed to the providers per region (ISO
    /// 3166 code as libphonenumber reads the number: about 250 values at most).
    public func regionSend(_ region: String) {
        Counter(label: "herald_sms_region_sends_total", dimensions: [("region", region)]).increment()
    }

    /// `herald_sms_uncertain_sends_total`: sends repeated because an earlier try may have
    /// reached a provider (a crash between its acceptance and our commit): the only window
    /// in which a verification gets a second SMS.
    public func uncertainSend() {
        Counter(label: "herald_sms_uncertain_sends_total").increment()
    }

    /// `herald_sms_fraud_guard_pauses_total{scope}`: regions or prefixes the fraud guard paused.
    public func fraudGuardPause(scope: String) {
        Counter(label: "herald_sms_fraud_guard_pauses_total", dimensions: [("scope", scope)]).increment()
    }

    /// `herald_sms_receipts_total{provider,status,result}`: receipts herald-sms handled: applied
    /// (the attempt moved on), duplicate, stale (a later or final status was there), unmatched
    /// (no send attempt had the message id by the job's last attempt: dropped).
    public func receipt(provider: String, status: DeliveryStatus, result: String) {
        Counter(label: "herald_sms_receipts_total", dimensions: [("provider", provider), ("status", status.rawValue), ("result", result)]).increment()
    }

    /// `herald_sms_deliveries_total{provider,region,status}`: SMS whose final receipt said
    /// delivered or undelivered, once each: the delivery ratio per provider and region.
    public func delivery(provider: String, region: String, status: DeliveryStatus) {
        Counter(label: "herald_sms_deliveries_total", dimensions: [("provider", provider), ("region", region), ("status", status.rawValue)]).increment()
    }

    /// A verification moved on to its next channel (`reason`: refused, failed, undelivered, timeout).
    public func fallback(from: SMSVerificationJob.Channel, to: SMSVerificationJob.Channel, reason: String) {
        Counter(label: "herald_sms_fallbacks_total", dimensions: [("from", from.rawValue), ("to", to.rawValue), ("reason", reason)]).increment()
    }

    /// What a `sms.fallback` job found (send, delivered, closed, done, gone, refused).
    public func fallbackDecision(_ decision: String) {
        Counter(label: "herald_sms_fallback_decisions_total", dimensions: [("decision", decision)]).increment()
    }

    /// `herald_sms_segments_total{encoding}`: segments sent (what the operator pays for).
    public func segments(_ encoding: SMSEncoding) {
        Counter(label: "herald_sms_segments_total", dimensions: [("encoding", encoding.scheme.rawValue)]).increment(by: encoding.segments)
    }
}
