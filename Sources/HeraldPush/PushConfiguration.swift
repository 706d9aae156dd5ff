import Foundation
import HeraldRuntime

/// `push.*`: secrets, limits and the APNs and FCM clients of `herald-push`.
public struct PushConfiguration: ConfigurationSection {
    public static let key = "push"

    /// Where pushes go: `outbox` (dev: `herald.dev_outbox` and `outbox.directory/push.jsonl`,
    /// no account needed) or `live` (APNs for `apns` jobs, FCM for `fcm` jobs).
    public enum Delivery: String, Sendable, CaseIterable { case outbox, live }

    /// `push.apns.*`: Apple's provider API, token-based authentication.
    public struct APNs: Sendable {
        public var productionHost = "https://api.push.apple.com"
        public var sandboxHost = "https://api.sandbox.push.apple.com"
        /// The `.p8` key's PEM text (PKCS#8, P-256) the JWT is signed with. Secret: give it as a
        /// file (`key_file:`, `HERALD_PUSH_APNS_KEY_FILE`), never in the repository.
        public var key = ""
        public var keyID = ""
        public var teamID = ""
        /// `apns-topic`; empty: the job's `app_id` (the bundle id).
        public var topic = ""
        /// The key under which the payload carries `{receipt, secret}`.
        public var payloadKey = "herald"
        /// `apns-expiration` is now + min(this, the secret's lifetime).
        public var expirationSeconds = 300
        /// The provider JWT is signed again after this long (Apple: not more often than every
        /// 20 minutes, not older than 60).
        public var jwtRefreshSeconds = 3000
        /// HTTP/2 connections per host at most; the next is used when the others are busy.
        public var connections = 2
        /// Requests in flight (streams) on one connection before the next connection is used.
        public var streamsPerConnection = 500
        /// CA bundle that signs the APNs server certificate; empty: the system's (tests: the test CA).
        public var caFile = ""
        public var timeoutMilliseconds = 10_000

        public init() {}
    }

    /// `push.fcm.*`: Firebase Cloud Messaging HTTP v1 with a service account.
    public struct FCM: Sendable {
        /// Empty: the service account's `project_id`.
        public var projectID = ""
        /// The service-account JSON key. Secret: give it as a file (`service_account_file:`,
        /// `HERALD_PUSH_FCM_SERVICE_ACCOUNT_FILE`), never in the repository.
        public var serviceAccount = ""
        /// Empty: the service account's `token_uri` (https://oauth2.googleapis.com/token).
        public var tokenEndpoint = ""
        public var sendEndpoint = "https://fcm.googleapis.com"
        public var timeoutMilliseconds = 10_000

        public init() {}
    }

    public var delivery: Delivery = .outbox
    /// A push secret's lifetime when the job suggests none (`timeout_seconds`).
    public var secretTTLSeconds = 300
    /// Background pushes per device token and window (Apple advises a few per hour).
    public var rateLimitMax = 3
    public var rateLimitWindowSeconds = 3600
    public var apns = APNs()
    public var fcm = FCM()
    /// Lets live delivery reach a host other than loopback over `http://` (APNs hosts, FCM
    /// endpoints, a service account's `token_uri`): off, such a configuration does not start.
    public var allowInsecureTransport = false

    public init() {}

    public init(source: ConfigSource) throws {
        delivery = try source.choice("push.delivery", default: delivery)
        secretTTLSeconds = try source.int("push.secret_ttl_seconds", default: secretTTLSeconds, range: 10...86_400)
        rateLimitMax = try source.int("push.rate_limit.max", default: rateLimitMax, range: 0...100_000)
        rateLimitWindowSeconds = try source.int("push.rate_limit.window_seconds", default: rateLimitWindowSeconds, range: 1...86_400)
        apns.productionHost = try Self.url(source, "push.apns.production_host", apns.productionHost)
        apns.sandboxHost = try Self.url(source, "push.apns.sandbox_host", apns.sandboxHost)
        apns.key = try source.string("push.apns.key", default: "", secret: true)
        apns.keyID = try source.string("push.apns.key_id", default: "")
        apns.teamID = try source.string("push.apns.team_id", default: "")
        apns.topic = try source.string("push.apns.topic", default: "")
        apns.payloadKey = try source.string("push.apns.payload_key", default: apns.payloadKey)
        guard !apns.payloadKey.isEmpty, apns.payloadKey != "aps" else {
            throw ConfigError(key: "push.apns.payload_key", reason: "must be a non-empty key other than 'aps'")
        }
        apns.expirationSeconds = try source.int("push.apns.expiration_seconds", default: apns.expirationSeconds, range: 0...2_592_000)
        apns.jwtRefreshSeconds = try source.int("push.apns.jwt_refresh_seconds", default: apns.jwtRefreshSeconds, range: 1200...3300)
        apns.connections = try source.int("push.apns.connections", default: apns.connections, range: 1...64)
        apns.streamsPerConnection = try source.int("push.apns.streams_per_connection", default: apns.streamsPerConnection, range: 1...1000)
        apns.caFile = try source.string("push.apns.ca_file", default: "")
        apns.timeoutMilliseconds = try source.int("push.apns.timeout_ms", default: apns.timeoutMilliseconds, range: 100...120_000)
        fcm.projectID = try source.string("push.fcm.project_id", default: "")
        fcm.serviceAccount = try source.string("push.fcm.service_account", default: "", secret: true)
        fcm.tokenEndpoint = try source.string("push.fcm.token_endpoint", default: "")
        fcm.sendEndpoint = try Self.url(source, "push.fcm.send_endpoint", fcm.sendEndpoint)
        fcm.timeoutMilliseconds = try source.int("push.fcm.timeout_ms", default: fcm.timeoutMilliseconds, range: 100...120_000)
        allowInsecureTransport = try source.bool("push.allow_insecure_transport", default: false)
        if delivery == .live { try checkLive() }
    }

    /// With live delivery, APNs needs its key, key id and team id; FCM its service account.
    /// (A platform without credentials makes its jobs fail as `push_provider_not_configured`.)
    func checkLive() throws(ConfigError) {
        if !apns.key.isEmpty, apns.keyID.isEmpty || apns.teamID.isEmpty {
            throw ConfigError(key: "push.apns", reason: "key_id and team_id are required with a key")
        }
        // Nothing in clear to a host other than loopback. (A service account that does not
        // parse is reported by checkCredentials and at the handler's start.)
        var urls = [("push.apns.production_host", apns.productionHost), ("push.apns.sandbox_host", apns.sandboxHost),
                    ("push.fcm.send_endpoint", fcm.sendEndpoint), ("push.fcm.token_endpoint", fcm.tokenEndpoint)]
        if fcm.tokenEndpoint.isEmpty, let account = try? ServiceAccount(json: fcm.serviceAccount) {
            urls.append(("push.fcm.service_account", account.tokenURI))
        }
        for (key, url) in urls {
            try ClearTextPolicy.check(url: url, key: key, allowed: allowInsecureTransport, allowKey: "push.allow_insecure_transport")
        }
    }

    /// The APNs key and the FCM service account parse (when set). Errors never carry them.
    public func checkCredentials() throws(ConfigError) {
        if !apns.key.isEmpty {
            _ = try APNsTokenCache(pem: apns.key, keyID: apns.keyID, teamID: apns.teamID, refreshInterval: TimeInterval(apns.jwtRefreshSeconds))
        }
        if !fcm.serviceAccount.isEmpty { _ = try ServiceAccount(json: fcm.serviceAccount) }
    }

    /// Every `push.*` key with its effective value, secrets masked (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        func mask(_ value: String) -> String { value.isEmpty ? "" : "***" }
        return [
            "push.delivery": delivery.rawValue, "push.secret_ttl_seconds": secretTTLSeconds,
            "push.rate_limit.max": rateLimitMax, "push.rate_limit.window_seconds": rateLimitWindowSeconds,
            "push.apns.production_host": apns.productionHost, "push.apns.sandbox_host": apns.sandboxHost,
            "push.apns.key": mask(apns.key), "push.apns.key_id": apns.keyID,
            "push.apns.team_id": apns.teamID, "push.apns.topic": apns.topic, "push.apns.payload_key": apns.payloadKey,
            "push.apns.expiration_seconds": apns.expirationSeconds, "push.apns.jwt_refresh_seconds": apns.jwtRefreshSeconds,
            "push.apns.connections": apns.connections, "push.apns.streams_per_connection": apns.streamsPerConnection,
            "push.apns.ca_file": apns.caFile, "push.apns.timeout_ms": apns.timeoutMilliseconds,
            "push.fcm.project_id": fcm.projectID, "push.fcm.service_account": mask(fcm.serviceAccount),
            "push.fcm.token_endpoint": fcm.tokenEndpoint,
            "push.fcm.send_endpoint": fcm.sendEndpoint, "push.fcm.timeout_ms": fcm.timeoutMilliseconds,
            "push.allow_insecure_transport": allowInsecureTransport,
        ]
    }

    private static func url(_ source: ConfigSource, _ key: String, _ fallback: String) throws -> String {
        let value = try source.string(key, default: fallback)
        let lower = value.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else {
            throw ConfigError(key: key, reason: "must be an http(s) URL")
        }
        return value.hasSuffix("/") ? String(value.dropLast()) : value
    }
}

extension HeraldConfiguration {
    /// `push.*`
    public var push: PushConfiguration {
        get { self[PushConfiguration.self] }
        set { self[PushConfiguration.self] = newValue }
    }
}
