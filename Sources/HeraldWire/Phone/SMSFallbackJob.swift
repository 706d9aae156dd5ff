import Foundation
import HeraldRuntime

/// `sms.fallback` v1: send verification `verification_id`'s code on its channel `step` (0-based in
/// the list it was sent with), because the channel before it was not delivered. Herald enqueues
/// it itself, in the transaction that records why (herald.sms_fallback_schedule): after the
/// previous channel's wait (`timeout`, through a wait queue) or on its undelivered receipt
/// (`undelivered`). The same step asked for twice is one message id, so one job.
public struct SMSFallbackJob: HeraldJob, Equatable {
    public static let kind = JobKind.sms
    public static let name = "sms.fallback"
    public static let version = 1

    public enum Reason: String, Codable, Sendable, CaseIterable { case timeout, undelivered }

    public var version: Int
    public var verificationID: String
    public var step: Int
    public var reason: Reason
    /// The verification's number (E.164): the fallback's send is counted in its limits.
    public var phoneNumber: String
    /// The IP of the end user whose request started the verification (its job's `client.ip`):
    /// the fallback's send is counted in its per-IP limit too. Absent when the request had none.
    public var clientIP: String?

    public init(verificationID: String, step: Int, reason: Reason, phoneNumber: String, clientIP: String? = nil) {
        self.version = Self.version
        self.verificationID = verificationID
        self.step = step
        self.reason = reason
        self.phoneNumber = phoneNumber
        self.clientIP = clientIP
    }

    enum CodingKeys: String, CodingKey {
        case version, step, reason
        case verificationID = "verification_id", phoneNumber = "phone_number", clientIP = "client_ip"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(verificationID, field: "verification_id")
        guard (1...2).contains(step) else { throw JobValidationError("step must be 1 or 2 (the second or third channel)") }
        do {
            _ = try PhoneNumber(phoneNumber)
        } catch {
            throw JobValidationError("phone_number \(error.reason)")
        }
        if let clientIP { _ = try ClientIP(clientIP, field: "client_ip") }
    }
}
