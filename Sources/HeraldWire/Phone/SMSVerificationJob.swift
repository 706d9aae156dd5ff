import Foundation
import HeraldRuntime

/// `sms.verification` v1: send a one-time code to a phone number.
public struct SMSVerificationJob: HeraldJob, Equatable {
    public static let kind = JobKind.sms
    public static let name = "sms.verification"
    public static let version = 1

    public enum Purpose: String, Codable, Sendable, CaseIterable { case signIn = "sign_in", mfaEnroll = "mfa_enroll", mfaSignIn = "mfa_sign_in" }

    /// How the code goes out: an SMS (`sms.providers`), a WhatsApp authentication template
    /// (`sms.whatsapp`), or a call that reads it out (`sms.voice`).
    public enum Channel: String, Codable, Sendable, CaseIterable { case sms, whatsapp, voice }

    /// Where the request came from, for rate limits.
    public struct ClientContext: Codable, Sendable, Equatable {
        public var ip: String?
        public var appID: String?
        public init(ip: String? = nil, appID: String? = nil) { self.ip = ip; self.appID = appID }
        enum CodingKeys: String, CodingKey { case ip, appID = "app_id" }
    }

    public var version: Int
    public var verificationID: String
    public var phoneNumber: String
    public var locale: String?
    public var purpose: Purpose
    public var forceResend: Bool?
    public var client: ClientContext?
    /// Evidence of a genuine app (``AppVerification``), judged by `sms.app_verification.mode`.
    public var appVerification: AppVerification?
    /// Digits of a new code (4 to 10) instead of `sms.code_length`: a Twilio Verify Service's `CodeLength`.
    public var codeLength: Int?
    /// Lifetime of a new code in seconds (60 to 86,400) instead of `sms.code_ttl_seconds`.
    public var codeTTLSeconds: Int?
    /// The one channel of this verification (no fallback); `channels` instead for a list.
    public var channel: Channel?
    /// The channels to try in turn (docs/fallback.md); absent (and no `channel`): `sms.fallback`'s
    /// list for the number's region.
    public var channels: [Channel]?
    /// Whose code it is (herald-api: the Twilio Verify service's sid): a pending code is shared,
    /// reused and checked only within its tenant; absent is a tenant of its own (every `/v1`
    /// start). The limits, the guessing lock and the fraud guard count per number across tenants.
    public var tenant: String?

    public init(verificationID: String, phoneNumber: String, locale: String? = nil, purpose: Purpose = .signIn, forceResend: Bool = false, client: ClientContext? = nil,
                appVerification: AppVerification? = nil, codeLength: Int? = nil, codeTTLSeconds: Int? = nil, channel: Channel? = nil,
                channels: [Channel]? = nil, tenant: String? = nil) {
        self.version = Self.version
        self.verificationID = verificationID
        self.phoneNumber = phoneNumber
        self.locale = locale
        self.purpose = purpose
        self.forceResend = forceResend
        self.client = client
        self.appVerification = appVerification
        self.codeLength = codeLength
        self.codeTTLSeconds = codeTTLSeconds
        self.channel = channel
        self.channels = channels
        self.tenant = tenant
    }

    enum CodingKeys: String, CodingKey {
        case version, locale, purpose, client, channel, channels, tenant
        case verificationID = "verification_id", phoneNumber = "phone_number", forceResend = "force_resend", appVerification = "app_verification"
        case codeLength = "code_length", codeTTLSeconds = "code_ttl_seconds"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(verificationID, field: "verification_id")
        do {
            // Strict E.164 syntax (see ``PhoneNumber``); herald-sms reads the number with libphonenumber.
            _ = try PhoneNumber(phoneNumber)
        } catch {
            throw JobValidationError("phone_number \(error.reason)")
        }
        if let locale { try WireRules.locale(locale, field: "locale") }
        if let tenant { try WireRules.identifier(tenant, field: "tenant") }
        if let ip = client?.ip { _ = try ClientIP(ip, field: "client.ip") }
        try appVerification?.validate()
        if let codeLength, !(4...10).contains(codeLength) { throw JobValidationError("code_length must be 4 to 10") }
        if let codeTTLSeconds, !(60...86_400).contains(codeTTLSeconds) { throw JobValidationError("code_ttl_seconds must be 60 to 86400") }
        if let channels {
            guard channel == nil else { throw JobValidationError("channels and channel: set one") }
            guard !channels.isEmpty, channels.count == Set(channels).count else { throw JobValidationError("channels must name one or more channels, each once") }
        }
    }
}

