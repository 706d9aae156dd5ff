/// A secret value (a code, a link code, a push secret) that never shows itself: its
/// description, debug description and reflection are `<redacted>`, so interpolating it
/// into a log line, an error or a reason cannot leak it.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The value itself: hand it only to the provider call and to ``SecretHasher``.
    public let revealed: String

    public init(_ value: String) { self.revealed = value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
