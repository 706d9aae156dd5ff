import Foundation

/// `sms.verification` v1: send a one-time code to a phone number.
public struct SMSVerificationJob: HeraldJob, Equatable {
    public static let kind = JobKind.sms
    public static let name = "sms.verification"
    public static let version = 1

    public enum Purpose: String, Codable, Sendable, CaseIterable { case signIn = "sign_in", mfaEnroll = "mfa_enroll", mfaSignIn = "mfa_sign_in" }

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

    public init(verificationID: String, phoneNumber: String, locale: String? = nil, purpose: Purpose = .signIn, forceResend: Bool = false, client: ClientContext? = nil) {
        self.version = Self.version
        self.verificationID = verificationID
        self.phoneNumber = phoneNumber
        self.locale = locale
        self.purpose = purpose
        self.forceResend = forceResend
        self.client = client
    }

    enum CodingKeys: String, CodingKey {
        case version, locale, purpose, client
        case verificationID = "verification_id", phoneNumber = "phone_number", forceResend = "force_resend"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(verificationID, field: "verification_id")
        try WireRules.e164(phoneNumber, field: "phone_number")
        if let locale { try WireRules.locale(locale, field: "locale") }
    }
}

/// `email.action` v1: send a sign-in, verification or reset link.
public struct EmailActionJob: HeraldJob, Equatable {
    public static let kind = JobKind.email
    public static let name = "email.action"
    public static let version = 1

    public enum Mode: String, Codable, Sendable, CaseIterable {
        case signIn = "sign_in", verifyEmail = "verify_email", resetPassword = "reset_password", verifyAndChangeEmail = "verify_and_change_email"
    }

    /// Firebase's ActionCodeSettings.
    public struct ActionCodeSettings: Codable, Sendable, Equatable {
        public var url: String
        public var handleCodeInApp: Bool?
        public var iosBundleID: String?
        public var androidPackageName: String?
        public var androidInstallApp: Bool?
        public var androidMinimumVersion: String?
        public var linkDomain: String?
        /// Deprecated by Firebase; accepted and ignored.
        public var dynamicLinkDomain: String?

        public init(url: String, handleCodeInApp: Bool? = true, iosBundleID: String? = nil, androidPackageName: String? = nil, androidInstallApp: Bool? = nil, androidMinimumVersion: String? = nil, linkDomain: String? = nil) {
            self.url = url
            self.handleCodeInApp = handleCodeInApp
            self.iosBundleID = iosBundleID
            self.androidPackageName = androidPackageName
            self.androidInstallApp = androidInstallApp
            self.androidMinimumVersion = androidMinimumVersion
            self.linkDomain = linkDomain
        }

        enum CodingKeys: String, CodingKey {
            case url
            case handleCodeInApp = "handle_code_in_app", iosBundleID = "ios_bundle_id"
            case androidPackageName = "android_package_name", androidInstallApp = "android_install_app"
            case androidMinimumVersion = "android_minimum_version", linkDomain = "link_domain"
            case dynamicLinkDomain = "dynamic_link_domain"
        }
    }

    public var version: Int
    public var requestID: String
    public var email: String
    public var mode: Mode
    public var locale: String?
    public var actionCodeSettings: ActionCodeSettings

    public init(requestID: String, email: String, mode: Mode, locale: String? = nil, actionCodeSettings: ActionCodeSettings) {
        self.version = Self.version
        self.requestID = requestID
        self.email = email
        self.mode = mode
        self.locale = locale
        self.actionCodeSettings = actionCodeSettings
    }

    enum CodingKeys: String, CodingKey {
        case version, email, mode, locale
        case requestID = "request_id", actionCodeSettings = "action_code_settings"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(requestID, field: "request_id")
        try WireRules.email(email, field: "email")
        if let locale { try WireRules.locale(locale, field: "locale") }
        try WireRules.httpURL(actionCodeSettings.url, field: "action_code_settings.url")
        if mode == .signIn, actionCodeSettings.handleCodeInApp != true {
            throw JobValidationError("action_code_settings.handle_code_in_app must be true for sign_in")
        }
    }
}

/// `push.verification` v1: send a silent push carrying a secret to prove the app is genuine.
public struct PushVerificationJob: HeraldJob, Equatable {
    public static let kind = JobKind.push
    public static let name = "push.verification"
    public static let version = 1

    public enum Platform: String, Codable, Sendable, CaseIterable { case apns, fcm }
    public enum Environment: String, Codable, Sendable, CaseIterable { case sandbox, production }

    public var version: Int
    public var receipt: String
    public var deviceToken: String
    public var platform: Platform
    public var environment: Environment
    public var appID: String
    public var timeoutSeconds: Int?

    public init(receipt: String, deviceToken: String, platform: Platform, environment: Environment, appID: String, timeoutSeconds: Int? = nil) {
        self.version = Self.version
        self.receipt = receipt
        self.deviceToken = deviceToken
        self.platform = platform
        self.environment = environment
        self.appID = appID
        self.timeoutSeconds = timeoutSeconds
    }

    enum CodingKeys: String, CodingKey {
        case version, receipt, platform, environment
        case deviceToken = "device_token", appID = "app_id", timeoutSeconds = "timeout_seconds"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(receipt, field: "receipt")
        guard !deviceToken.isEmpty, deviceToken.utf8.count <= 4096, deviceToken.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw JobValidationError("device_token must be 1 to 4096 printable ASCII characters")
        }
        if platform == .apns {
            guard deviceToken.utf8.count % 2 == 0, deviceToken.allSatisfy(\.isHexDigit) else {
                throw JobValidationError("device_token must be hexadecimal for apns")
            }
        }
        try WireRules.identifier(appID, field: "app_id")
        if let timeoutSeconds, !(1...86_400).contains(timeoutSeconds) {
            throw JobValidationError("timeout_seconds must be between 1 and 86400")
        }
    }
}

/// `cleanup.run` v1: start (or join) a cleanup run of expired anonymous accounts.
public struct CleanupRunJob: HeraldJob, Equatable {
    public static let kind = JobKind.cleanup
    public static let name = "cleanup.run"
    public static let version = 1

    public var version: Int
    public var runID: String
    public var dryRun: Bool?

    public init(runID: String, dryRun: Bool = false) {
        self.version = Self.version
        self.runID = runID
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey { case version, runID = "run_id", dryRun = "dry_run" }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(runID, field: "run_id")
    }
}
