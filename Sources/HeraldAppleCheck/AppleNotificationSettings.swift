import HeraldRuntime

/// `apple.notifications.*`: how `herald-apple` judges Apple's server-to-server notifications.
public struct AppleNotificationSettings: Sendable {
    /// A notification whose `iat` is older than this (plus `apple.leeway_seconds`) is refused as
    /// stale. Its `jti` is remembered at least this long, so the pair bounds replays. Generous
    /// by default: a notification waits in the queue (a backlog, the retry delays, a database
    /// outage) before it is verified, and refusing a real `account-delete` loses the user's request.
    public var maxAgeSeconds = 86_400

    public init() {}

    public init(source: ConfigSource) throws {
        maxAgeSeconds = try source.int("apple.notifications.max_age_seconds", default: maxAgeSeconds, range: 60...2_592_000)
    }

    public var effectiveValues: [String: Any] { ["apple.notifications.max_age_seconds": maxAgeSeconds] }
}
