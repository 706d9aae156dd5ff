import HeraldRuntime
import HeraldWire

/// `sms.app_verification.*`: evidence that a genuine app asked for the SMS (a confirmed push
/// receipt or a captcha token), checked before anything is sent (docs/abuse.md).
public struct AppVerificationConfiguration: Sendable, Equatable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Evidence is ignored.
        case off
        /// Evidence, when a job carries it, must be valid; a job without it is sent.
        case optional
        /// A job without valid evidence is refused (`app_not_verified`), test numbers excepted.
        case required
    }

    /// One captcha provider's siteverify endpoint and secret.
    public struct Captcha: Sendable, Equatable {
        public var url: String
        public var secret = ""
    }

    public var mode = Mode.off
    /// A receipt counts only if confirmed at most this long ago.
    public var receiptMaxAgeSeconds = 300
    /// reCAPTCHA v3's score (1.0: very likely a person) must reach this; hCaptcha Enterprise's
    /// risk score (1.0: very likely a bot) must stay at or under 1 - min_score. Turnstile has none.
    public var minScore = 0.5
    /// When set, the siteverify answer's `hostname` must be one of these.
    public var hostnames: [String] = []
    /// When set, the siteverify answer's `action` must be this (reCAPTCHA v3, Turnstile).
    public var action = ""
    public var timeoutMilliseconds = 5000
    public var recaptcha = Captcha(url: "https://www.google.com/recaptcha/api/siteverify")
    public var hcaptcha = Captcha(url: "https://api.hcaptcha.com/siteverify")
    public var turnstile = Captcha(url: "https://challenges.cloudflare.com/turnstile/v0/siteverify")

    public init() {}

    public init(source: ConfigSource, allowInsecureTransport: Bool) throws {
        // YAML 1.1 reads a bare `off` as false: take it as meant.
        let mode = try source.string("sms.app_verification.mode", default: self.mode.rawValue)
        guard let parsed = mode == "false" ? .off : Mode(rawValue: mode) else {
            throw ConfigError(key: "sms.app_verification.mode", reason: "must be one of off, optional, required, got '\(mode)'")
        }
        self.mode = parsed
        receiptMaxAgeSeconds = try source.int("sms.app_verification.receipt_max_age_seconds", default: receiptMaxAgeSeconds, range: 1...86_400)
        let score = try source.string("sms.app_verification.min_score", default: "\(minScore)")
        guard let value = Double(score.trimmingCharacters(in: .whitespaces)), (0...1).contains(value) else {
            throw ConfigError(key: "sms.app_verification.min_score", reason: "must be a number from 0 to 1, got '\(score)'")
        }
        minScore = value
        hostnames = try source.stringList("sms.app_verification.hostnames", default: [])
        action = try source.string("sms.app_verification.action", default: "")
        timeoutMilliseconds = try source.int("sms.app_verification.timeout_ms", default: timeoutMilliseconds, range: 100...60_000)
        for (name, path) in [("recaptcha", \Self.recaptcha), ("hcaptcha", \Self.hcaptcha), ("turnstile", \Self.turnstile)] {
            self[keyPath: path].url = try source.string("sms.app_verification.\(name).url", default: self[keyPath: path].url)
            self[keyPath: path].secret = try source.string("sms.app_verification.\(name).secret", default: "", secret: true)
            if !self[keyPath: path].secret.isEmpty {
                try ClearTextPolicy.check(url: self[keyPath: path].url, key: "sms.app_verification.\(name).url",
                                          allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
            }
        }
    }

    /// The endpoint of a provider; nil when it has no secret (its tokens are refused).
    public func captcha(_ provider: SMSVerificationJob.AppVerification.Provider) -> Captcha? {
        let captcha = switch provider {
        case .recaptcha: recaptcha
        case .hcaptcha: hcaptcha
        case .turnstile: turnstile
        }
        return captcha.secret.isEmpty ? nil : captcha
    }

    /// For `heraldctl config check` (secrets masked).
    public var effectiveValues: [String: Any] {
        func mask(_ value: String) -> String { value.isEmpty ? "" : "***" }
        return [
            "sms.app_verification.mode": mode.rawValue, "sms.app_verification.receipt_max_age_seconds": receiptMaxAgeSeconds,
            "sms.app_verification.min_score": minScore, "sms.app_verification.hostnames": hostnames,
            "sms.app_verification.action": action, "sms.app_verification.timeout_ms": timeoutMilliseconds,
            "sms.app_verification.recaptcha.url": recaptcha.url, "sms.app_verification.recaptcha.secret": mask(recaptcha.secret),
            "sms.app_verification.hcaptcha.url": hcaptcha.url, "sms.app_verification.hcaptcha.secret": mask(hcaptcha.secret),
            "sms.app_verification.turnstile.url": turnstile.url, "sms.app_verification.turnstile.secret": mask(turnstile.secret),
        ]
    }
}
