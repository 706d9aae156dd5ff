/// A configuration problem, naming the key so an operator can fix it.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted key (`amqp.url`), or the file for file-level problems.
    public var key: String
    public var reason: String

    public init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    public var description: String { "configuration key '\(key)': \(reason)" }
}
