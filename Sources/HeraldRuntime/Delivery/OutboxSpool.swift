import Foundation

/// Appends one JSON line per delivered dev message to `<directory>/<kind>.jsonl`.
public struct OutboxSpool: Sendable {
    public let directory: String

    public init?(directory: String) {
        guard !directory.isEmpty else { return nil }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
    }

    public func path(kind: String) -> String { (directory as NSString).appendingPathComponent("\(kind).jsonl") }

    public func append(kind: String, _ fields: [String: String]) {
        var record: [String: String] = fields
        record["at"] = Date().iso8601
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        // O_APPEND: one write per line keeps concurrent writers' lines whole.
        let fd = open(path(kind: kind), O_WRONLY | O_APPEND | O_CREAT, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
