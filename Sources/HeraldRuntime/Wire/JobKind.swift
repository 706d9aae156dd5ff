/// A worker kind: one queue, one executable, one family of routing keys.
public enum JobKind: String, Sendable, CaseIterable, Codable {
    case sms, email, push, cleanup, apple

    /// Routing-key prefix of this kind's jobs (`sms` → `sms.verification`).
    public var routingPrefix: String { rawValue }

    /// The default port of `/healthz`, `/readyz` and `/metrics` (so every worker kind fits on one host).
    public var defaultOpsPort: Int {
        switch self {
        case .sms: 9101
        case .email: 9102
        case .push: 9103
        case .cleanup: 9104
        case .apple: 9105
        }
    }
}
