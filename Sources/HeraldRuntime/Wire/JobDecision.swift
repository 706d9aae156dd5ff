import AMQP
import Foundation

/// What a worker decided about a job, answered to the job's `reply_to` (herald-api's replies
/// queue) once it is committed: the door's answer to the request that started it
/// (docs/wire-contract.md, "Decisions"). A provider's later refusal is not a decision: it is read
/// from the job's state.
public struct JobDecision: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        /// Decided to send: the provider call follows (its outcome is read later).
        case sending
        /// A code sent moments ago answers this request too: nothing sent.
        case reused
        /// A test number or address: its fixed code stored, nothing sent.
        case test
        /// Refused by a rule (`reason`): a limit or a pause (`retryAfterSeconds`), or a policy.
        case refused
        /// The job can never be handled as it is (`reason` names the field).
        case invalid
    }

    public var status: Status
    /// Why, for `refused` and `invalid`: the reason the worker records (`rate_limited:ip`, `region`, …).
    public var reason: String?
    /// For a limit or a pause: when a retry may pass.
    public var retryAfterSeconds: Int?
    /// For `sending`: the channel of the first send (`sms`, `whatsapp`, `voice`, `email`).
    public var channel: String?
    /// For `reused`: the resend interval (a new code is sent only after it, or with `force_resend`).
    public var resendIntervalSeconds: Int?

    public init(status: Status, reason: String? = nil, retryAfterSeconds: Int? = nil, channel: String? = nil, resendIntervalSeconds: Int? = nil) {
        self.status = status
        self.reason = reason
        self.retryAfterSeconds = retryAfterSeconds
        self.channel = channel
        self.resendIntervalSeconds = resendIntervalSeconds
    }

    /// What a refusal is, read from its reason: a limit (`rate_limited:<scope>`, `locked_out`) or a
    /// pause (`fraud_guard:…`) passes again later (`retryAfterSeconds`); any other reason is a
    /// policy's, which does not. Each door maps these to its own answers (`/v1`: 429 or 422;
    /// `/v2`: Twilio's codes).
    public enum Refusal: Sendable, Equatable { case limit, pause, policy }

    /// The kind of this decision's refusal; nil when it is not `refused`.
    public var refusal: Refusal? {
        guard status == .refused else { return nil }
        let reason = reason ?? ""
        if reason.hasPrefix("rate_limited:") || reason == "locked_out" { return .limit }
        if reason.hasPrefix("fraud_guard:") { return .pause }
        return .policy
    }

    public static func sending(channel: String) -> JobDecision { JobDecision(status: .sending, channel: channel) }
    public static func refused(_ reason: String, retryAfterSeconds: Int? = nil) -> JobDecision {
        JobDecision(status: .refused, reason: reason, retryAfterSeconds: retryAfterSeconds)
    }

    enum CodingKeys: String, CodingKey {
        case status, reason, channel
        case retryAfterSeconds = "retry_after_seconds", resendIntervalSeconds = "resend_interval_seconds"
    }

    /// The AMQP type of a decision message.
    public static let typeName = "herald.decision.v1"

    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(self)) ?? Data(#"{"status":"invalid"}"#.utf8))
    }

    public static func decode(_ body: [UInt8]) -> JobDecision? {
        try? JSONDecoder().decode(JobDecision.self, from: Data(body))
    }
}
