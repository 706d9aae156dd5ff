import Foundation
import HeraldRuntime

/// `email.action` v1: send a sign-in, verification, reset, change or recovery link.
public struct EmailActionJob: HeraldJob, Equatable {
    public static let kind = JobKind.email
    public static let name = "email.action"
    public static let version = 1

    public enum Mode: String, Codable, Sendable, CaseIterable {
        case signIn = "sign_in", verifyEmail = "verify_email", resetPassword = "reset_password", verifyAndChangeEmail = "verify_and_change_email"
        /// The notice to the old address after a `verify_and_change_email` link was used: Herald
        /// enqueues it itself (a job of this mode from anyone else is refused as invalid).
        case recoverEmail = "recover_email"
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

    /// Where the request came from, for the per-IP send limit (`email.limits.ip`).
    public struct ClientContext: Codable, Sendable, Equatable {
        /// An IPv4 or IPv6 literal (``ClientIP``); anything else makes the job invalid.
        public var ip: String?
        public init(ip: String? = nil) { self.ip = ip }
    }

    public var version: Int
    public var requestID: String
    public var email: String
    public var mode: Mode
    /// `verify_and_change_email` only (required there): the account's current address, which
    /// gets the recovery notice once the new address (`email`) is verified.
    public var oldEmail: String?
    public var locale: String?
    public var actionCodeSettings: ActionCodeSettings
    public var client: ClientContext?

    public init(requestID: String, email: String, mode: Mode, oldEmail: String? = nil, locale: String? = nil, actionCodeSettings: ActionCodeSettings,
                client: ClientContext? = nil) {
        self.version = Self.version
        self.requestID = requestID
        self.email = email
        self.mode = mode
        self.oldEmail = oldEmail
        self.locale = locale
        self.actionCodeSettings = actionCodeSettings
        self.client = client
    }

    enum CodingKeys: String, CodingKey {
        case version, email, mode, locale, client
        case requestID = "request_id", actionCodeSettings = "action_code_settings", oldEmail = "old_email"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(requestID, field: "request_id")
        try WireRules.email(email, field: "email")
        if mode == .verifyAndChangeEmail {
            guard let oldEmail else { throw JobValidationError("old_email is required for verify_and_change_email") }
            try WireRules.email(oldEmail, field: "old_email")
        } else if oldEmail != nil {
            throw JobValidationError("old_email is only for verify_and_change_email")
        }
        if let locale { try WireRules.locale(locale, field: "locale") }
        if let ip = client?.ip { _ = try ClientIP(ip, field: "client.ip") }
        try WireRules.httpURL(actionCodeSettings.url, field: "action_code_settings.url")
        if mode == .signIn, actionCodeSettings.handleCodeInApp != true {
            throw JobValidationError("action_code_settings.handle_code_in_app must be true for sign_in")
        }
    }
}

