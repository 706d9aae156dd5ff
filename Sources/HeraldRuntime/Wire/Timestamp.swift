import Foundation

extension Date {
    /// RFC 3339 / ISO 8601 in UTC (`2026-11-22T05:50:48Z`), with a format style: a
    /// formatter made per call costs more than the rest of a job on Linux.
    public var iso8601: String { formatted(.iso8601) }

    /// The same with milliseconds (`2026-11-22T05:50:48.123Z`): every timestamp in an event
    /// (docs/wire-contract.md, Events).
    public var iso8601Milliseconds: String { formatted(Self.milliseconds) }

    private static let milliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
