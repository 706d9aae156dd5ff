/// A worker kind's section of the configuration (`sms.*`, `email.*`, …). The runtime loads and
/// stores sections without knowing their types: each worker kind declares its own (in its check
/// module when herald-api reads it too) and reaches it through an extension property
/// (`configuration.sms`).
public protocol ConfigurationSection: Sendable {
    /// The top-level key of the section, e.g. `sms`.
    static var key: String { get }
    /// Every key at its default.
    init()
    /// Reads the section's keys; throws ``ConfigError`` naming the first invalid one.
    init(source: ConfigSource) throws
}
