/// A channel's section of the configuration (`sms.*`, `email.*`, …). The runtime loads and
/// stores sections without knowing their types: each worker module declares its own and
/// reaches it through an extension property (`configuration.sms`).
public protocol ConfigurationSection: Sendable {
    /// The top-level key of the section, e.g. `sms`.
    static var key: String { get }
    /// Every key at its default.
    init()
    /// Reads the section's keys; throws ``ConfigError`` naming the first invalid one.
    init(source: ConfigSource) throws
}
