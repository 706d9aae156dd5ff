import Foundation
import Logging

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"level":…,"logger":…,"msg":…,"ts":…, metadata…}`, keys in byte order. Free text and
/// metadata pass through ``Redact/scrub(_:)`` so a phone number or email never reaches the
/// log whole.
///
/// The line is written by hand rather than by `JSONSerialization`: that one boxes every value
/// in `Any` and sorts keys with a locale's collation (ICU), which made the log line the
/// largest cost of a dead-lettered malformed message (docs/reliability.md, the poison floor).
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let json: Bool

    public init(label: String, level: Logger.Level, json: Bool = true) {
        self.label = label
        self.logLevel = level
        self.json = json
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let line = json
            ? Self.jsonLine(timestamp: Self.timestamp(), level: event.level, label: label, message: event.message.description, metadata: merged)
            : Self.textLine(timestamp: Self.timestamp(), level: event.level, label: label, message: event.message.description, metadata: merged)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// One JSON log line (with its newline). Metadata keys replace the fixed ones of the same name.
    static func jsonLine(timestamp: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var fields: [String: Logger.Metadata.Value] = [
            "ts": .string(timestamp), "level": .string(level.rawValue), "logger": .string(label), "msg": .string(message),
        ]
        for (key, value) in metadata { fields[key] = value }
        var out = ""
        out.reserveCapacity(256)
        writeObject(fields, into: &out)
        out.append("\n")
        return out
    }

    static func textLine(timestamp: String, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        let meta = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\(Redact.scrub($0.value.description))" }.joined(separator: " ")
        return "\(timestamp) \(level.rawValue.uppercased()) \(label): \(Redact.scrub(message))\(meta.isEmpty ? "" : " " + meta)\n"
    }

    private static func writeObject(_ object: [String: Logger.Metadata.Value], into out: inout String) {
        out.append("{")
        for (index, key) in object.keys.sorted().enumerated() {
            if index > 0 { out.append(",") }
            writeString(key, into: &out)
            out.append(":")
            writeValue(object[key]!, into: &out)
        }
        out.append("}")
    }

    private static func writeValue(_ value: Logger.Metadata.Value, into out: inout String) {
        switch value {
        case .string(let text): writeString(Redact.scrub(text), into: &out)
        case .stringConvertible(let text): writeString(Redact.scrub(text.description), into: &out)
        case .array(let items):
            out.append("[")
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(",") }
                writeValue(item, into: &out)
            }
            out.append("]")
        case .dictionary(let dictionary): writeObject(dictionary, into: &out)
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, `/` and non-ASCII
    /// written as they are (UTF-8).
    private static func writeString(_ text: String, into out: inout String) {
        out.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out.append("\\\"")
            case "\\": out.append("\\\\")
            case "\n": out.append("\\n")
            case "\r": out.append("\\r")
            case "\t": out.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out.append("\"")
    }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
