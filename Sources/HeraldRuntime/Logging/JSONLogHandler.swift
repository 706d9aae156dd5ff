import Foundation
import Logging

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"ts":…,"level":…,"logger":…,"msg":…, metadata…}`. Free text and metadata pass
/// through ``Redact/scrub(_:)`` so a phone number or email never reaches the log whole.
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
        let message = Redact.scrub(event.message.description)
        let line: String
        if json {
            var object: [String: Any] = [
                "ts": Self.timestamp(),
                "level": event.level.rawValue,
                "logger": label,
                "msg": message,
            ]
            for (key, value) in merged { object[key] = Self.render(value) }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            line = String(decoding: data, as: UTF8.self) + "\n"
        } else {
            let meta = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\(Redact.scrub($0.value.description))" }.joined(separator: " ")
            line = "\(Self.timestamp()) \(event.level.rawValue.uppercased()) \(label): \(message)\(meta.isEmpty ? "" : " " + meta)\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    private static func render(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let s): return Redact.scrub(s)
        case .stringConvertible(let s): return Redact.scrub(s.description)
        case .array(let items): return items.map(render)
        case .dictionary(let dict): return dict.mapValues(render)
        }
    }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
