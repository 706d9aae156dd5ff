import Foundation
import HeraldRuntime

/// `apple.*`: Sign in with Apple. The identity-token check (front APIs through
/// `HeraldClient`, and `herald-apple` for the ID tokens and notifications it reads) uses the
/// client ids, Apple's key set and the leeway; `herald-apple`'s token and revoke calls add
/// their keys here too.
public struct AppleConfiguration: ConfigurationSection {
    public static let key = "apple"

    /// The `aud` values accepted: the app's bundle id and the web's services id(s).
    public var clientIDs: [String] = []
    /// Apple's published keys (JWKS).
    public var jwksURL = "https://appleid.apple.com/auth/keys"
    /// The key set is fetched at most once per this many seconds, whatever the reason (an
    /// unknown `kid`, an expired cache): a flood of tokens with made-up key ids costs one
    /// fetch per interval, not one per token.
    public var jwksRefetchIntervalSeconds = 60
    /// How long a key set is kept when Apple's answer carries no `Cache-Control: max-age`.
    public var jwksDefaultMaxAgeSeconds = 3600
    public var jwksTimeoutMilliseconds = 5000
    /// Clock skew allowed on `exp` and `iat`.
    public var leewaySeconds = 60
    /// `apple.notifications.*` (``AppleNotificationSettings``).
    public var notifications = AppleNotificationSettings()
    /// Lets Apple's URLs be `http://` to a host other than loopback: off, such a
    /// configuration does not start.
    public var allowInsecureTransport = false
    /// `herald-apple`'s calls to Apple's token and revoke endpoints (``AppleTokenSettings``).
    public var tokens = AppleTokenSettings()

    public init() {}

    public init(source: ConfigSource) throws {
        clientIDs = try source.stringList("apple.client_ids", default: [])
        if clientIDs.contains(where: { $0.isEmpty || $0.contains(where: \.isWhitespace) }) {
            throw ConfigError(key: "apple.client_ids", reason: "every client id must be a non-empty bundle id or services id")
        }
        jwksURL = try Self.url(source, "apple.jwks_url", jwksURL)
        jwksRefetchIntervalSeconds = try source.int("apple.jwks_refetch_interval_seconds", default: jwksRefetchIntervalSeconds, range: 1...86_400)
        jwksDefaultMaxAgeSeconds = try source.int("apple.jwks_default_max_age_seconds", default: jwksDefaultMaxAgeSeconds, range: 0...604_800)
        jwksTimeoutMilliseconds = try source.int("apple.jwks_timeout_ms", default: jwksTimeoutMilliseconds, range: 100...120_000)
        leewaySeconds = try source.int("apple.leeway_seconds", default: leewaySeconds, range: 0...600)
        notifications = try AppleNotificationSettings(source: source)
        allowInsecureTransport = try source.bool("apple.allow_insecure_transport", default: false)
        try ClearTextPolicy.check(url: jwksURL, key: "apple.jwks_url", allowed: allowInsecureTransport, allowKey: "apple.allow_insecure_transport")
        tokens = try AppleTokenSettings(source: source)
        for (key, url) in [("apple.token_url", tokens.tokenURL), ("apple.revoke_url", tokens.revokeURL)] {
            try ClearTextPolicy.check(url: url, key: key, allowed: allowInsecureTransport, allowKey: "apple.allow_insecure_transport")
        }
    }

    /// Every `apple.*` key with its effective value (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        [
            "apple.client_ids": clientIDs, "apple.jwks_url": jwksURL,
            "apple.jwks_refetch_interval_seconds": jwksRefetchIntervalSeconds,
            "apple.jwks_default_max_age_seconds": jwksDefaultMaxAgeSeconds,
            "apple.jwks_timeout_ms": jwksTimeoutMilliseconds, "apple.leeway_seconds": leewaySeconds,
            "apple.allow_insecure_transport": allowInsecureTransport,
        ].merging(tokens.effectiveValues) { $1 }.merging(notifications.effectiveValues) { $1 }
    }

    static func url(_ source: ConfigSource, _ key: String, _ fallback: String) throws -> String {
        let value = try source.string(key, default: fallback)
        let lower = value.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URL(string: value)?.host != nil else {
            throw ConfigError(key: key, reason: "must be an http(s) URL")
        }
        return value
    }
}

extension HeraldConfiguration {
    /// `apple.*`
    public var apple: AppleConfiguration {
        get { self[AppleConfiguration.self] }
        set { self[AppleConfiguration.self] = newValue }
    }
}
