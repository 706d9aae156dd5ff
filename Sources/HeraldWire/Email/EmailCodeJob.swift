import Foundation
import HeraldRuntime

/// `email.code` v1: mail a one-time numeric code to an address (Twilio Verify's and Firebase's
/// email OTP), checked later with ``EmailCodeVerifier``. One pending code per (address, purpose, tenant);
/// a second request inside `email.code.resend_interval_seconds` mails nothing and is answered by
/// the code just sent, unless `force_resend`.
public struct EmailCodeJob: HeraldJob, Equatable {
    public static let kind = JobKind.email
    public static let name = "email.code"
    public static let version = 1

    /// What the code is for: wrong codes of every purpose count together toward the address's lockout.
    public enum Purpose: String, Codable, Sendable, CaseIterable {
        case signIn = "sign_in", mfaEnroll = "mfa_enroll", mfaSignIn = "mfa_sign_in", verifyEmail = "verify_email"
    }

    /// Where the request came from, for the per-IP send limit (`email.limits.ip`).
    public typealias ClientContext = EmailActionJob.ClientContext

    public var version: Int
    public var verificationID: String
    public var email: String
    public var purpose: Purpose
    public var locale: String?
    public var forceResend: Bool?
    public var client: ClientContext?
    /// Digits of a new code (4 to 10) instead of `email.code.length`.
    public var codeLength: Int?
    /// Lifetime of a new code in seconds (60 to 86,400) instead of `email.code.ttl_seconds`.
    public var codeTTLSeconds: Int?
    /// Whose code it is (herald-api: the Twilio Verify service's sid): a pending code is shared,
    /// reused and checked only within its tenant; absent is a tenant of its own. The send limits
    /// and the guessing lock count per address across tenants.
    public var tenant: String?

    public init(verificationID: String, email: String, purpose: Purpose = .signIn, locale: String? = nil, forceResend: Bool = false,
                client: ClientContext? = nil, codeLength: Int? = nil, codeTTLSeconds: Int? = nil, tenant: String? = nil) {
        self.version = Self.version
        self.verificationID = verificationID
        self.email = email
        self.purpose = purpose
        self.locale = locale
        self.forceResend = forceResend
        self.client = client
        self.codeLength = codeLength
        self.codeTTLSeconds = codeTTLSeconds
        self.tenant = tenant
    }

    enum CodingKeys: String, CodingKey {
        case version, email, purpose, locale, client, tenant
        case verificationID = "verification_id", forceResend = "force_resend", codeLength = "code_length", codeTTLSeconds = "code_ttl_seconds"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(verificationID, field: "verification_id")
        try WireRules.email(email, field: "email")
        if let locale { try WireRules.locale(locale, field: "locale") }
        if let tenant { try WireRules.identifier(tenant, field: "tenant") }
        if let ip = client?.ip { _ = try ClientIP(ip, field: "client.ip") }
        if let codeLength, !(4...10).contains(codeLength) { throw JobValidationError("code_length must be 4 to 10") }
        if let codeTTLSeconds, !(60...86_400).contains(codeTTLSeconds) { throw JobValidationError("code_ttl_seconds must be 60 to 86400") }
    }
}
