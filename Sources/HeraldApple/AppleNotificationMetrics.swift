import Metrics

/// `herald-apple`'s metrics of `apple.notification` (the contract in docs/operations.md).
struct AppleNotificationMetrics: Sendable {
    /// `herald_apple_notifications_total{type,outcome}`: a verified notification's type
    /// (`email-disabled`, …, or `other`) and outcome (`applied`, `unchanged`, `no_account`,
    /// `ignored`, `duplicate`); `type="unverified"` with `outcome` `refused` or `retried` for
    /// one that failed a check.
    func finished(type: String, outcome: String) {
        Counter(label: "herald_apple_notifications_total", dimensions: [("type", type), ("outcome", outcome)]).increment()
    }

    /// `herald_apple_notifications_refused_total{check}`: refused notifications by the check
    /// that failed (`bad_signature`, `wrong_audience`, `stale`, `replayed`, `malformed`, …).
    func refused(check: String) {
        Counter(label: "herald_apple_notifications_refused_total", dimensions: [("check", check)]).increment()
        finished(type: "unverified", outcome: "refused")
    }

    /// The metric label of an event type: Apple's four, or `other`.
    static func label(_ type: String) -> String {
        AppleNotifications.EventType(rawValue: type)?.rawValue ?? "other"
    }
}
