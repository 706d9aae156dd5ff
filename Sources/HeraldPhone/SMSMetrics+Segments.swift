import HeraldPhoneCheck
import Metrics

extension SMSMetrics {
    /// `herald_sms_segments_total{encoding}`: segments sent (what the operator pays for).
    public func segments(_ encoding: SMSEncoding) {
        Counter(label: "herald_sms_segments_total", dimensions: [("encoding", encoding.scheme.rawValue)]).increment(by: encoding.segments)
    }
}
