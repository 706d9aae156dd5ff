import Foundation
import Yams

/// The merged configuration input: `Config/herald.yaml` (or another file) overlaid by
/// environment variables. Every key is read through a typed accessor that names the key
/// in its error; keys nobody reads are reported by ``unknownKeys()``.
///
/// Key `a.b_c` is overridden by `HERALD_A_B_C`; a secret-capable key also by
/// `HERALD_A_B_C_FILE`, whose file content (trailing newline trimmed) is the value.
public final class ConfigSource: @unchecked Sendable {
    private var values: [String: Any]
    let environment: [String: String]
    /// The directory of the file loaded (absolute), nil when there is none: relative paths
    /// in the file are relative to it (``path(_:default:)``).
    public let fileDirectory: String?
    private var readKeys: Set<String> = []
    private let lock = NSLock()

    /// Loads `path` if given (a missing file is an error), else starts from defaults only.
    public init(path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.environment = environment
        self.values = [:]
        self.fileDirectory = path.map { URL(fileURLWithPath: $0).standardizedFileURL.deletingLastPathComponent().path }
        if let path {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigError(key: path, reason: "cannot read the configuration file")
            }
            let parsed: Any?
            do {
                parsed = try Yams.load(yaml: text)
            } catch {
                throw ConfigError(key: path, reason: "not valid YAML: \(error)")
            }
            if let parsed {
                guard let root = parsed as? [String: Any] else {
                    throw ConfigError(key: path, reason: "the top level must be a mapping")
                }
                Self.flatten(root, prefix: "", into: &values)
            }
        }
    }

    /// Builds a source from literal values (tests, embedding).
    public init(values: [String: Any], environment: [String: String] = [:]) {
        self.values = values
        self.environment = environment
        self.fileDirectory = nil
    }

    private static func flatten(_ node: [String: Any], prefix: String, into out: inout [String: Any]) {
        for (key, value) in node {
            let full = prefix.isEmpty ? key : "\(prefix).\(key)"
            if let child = value as? [String: Any] {
                flatten(child, prefix: full, into: &out)
            } else {
                out[full] = value
            }
        }
    }

    /// The environment variable that overrides `key`.
    public static func environmentName(for key: String) -> String {
        "HERALD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    private func raw(_ key: String, secret: Bool) throws -> Any? {
        lock.lock()
        readKeys.insert(key)
        lock.unlock()
        let envName = Self.environmentName(for: key)
        if let value = environment[envName] { return value }
        if let file = environment[envName + "_FILE"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ConfigError(key: key, reason: "cannot read the file named by \(envName)_FILE")
            }
            return text.trimmingCharacters(in: .newlines)
        }
        if let file = values[key + "_file"] as? String, !file.isEmpty, secret {
            lock.lock(); readKeys.insert(key + "_file"); lock.unlock()
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ConfigError(key: key + "_file", reason: "cannot read the file it names")
            }
            return text.trimmingCharacters(in: .newlines)
        }
        if secret { lock.lock(); readKeys.insert(key + "_file"); lock.unlock() }
        return values[key]
    }

    public func string(_ key: String, default value: String, secret: Bool = false) throws -> String {
        guard let raw = try raw(key, secret: secret) else { return value }
        switch raw {
        case let s as String: return s
        case let i as Int: return String(i)
        case let d as Double: return String(d)
        case let b as Bool: return String(b)
        default: throw ConfigError(key: key, reason: "must be a string")
        }
    }

    public func int(_ key: String, default value: Int, range: ClosedRange<Int>? = nil) throws -> Int {
        try number(key, default: value, range: range, kind: "a whole number") { $0 as? Int ?? ($0 as? String).flatMap { Int($0) } }
    }

    public func double(_ key: String, default value: Double, range: ClosedRange<Double>) throws -> Double {
        try number(key, default: value, range: range, kind: "a number") { ($0 as? Double) ?? ($0 as? Int).map(Double.init) ?? ($0 as? String).flatMap { Double($0) } }
    }

    /// A number: `parse` takes the file's value (or the environment's text, trimmed); `kind`
    /// names what it must be in the error.
    private func number<T: Comparable>(_ key: String, default value: T, range: ClosedRange<T>?, kind: String, parse: (Any) -> T?) throws -> T {
        let result: T
        switch try raw(key, secret: false) {
        case nil: result = value
        case let s as String:
            guard let parsed = parse(s.trimmingCharacters(in: .whitespaces)) else {
                throw ConfigError(key: key, reason: "must be \(kind), got '\(s)'")
            }
            result = parsed
        case let other?:
            guard let parsed = parse(other) else { throw ConfigError(key: key, reason: "must be \(kind)") }
            result = parsed
        }
        if let range, !range.contains(result) {
            throw ConfigError(key: key, reason: "must be between \(range.lowerBound) and \(range.upperBound), got \(result)")
        }
        return result
    }

    public func bool(_ key: String, default value: Bool) throws -> Bool {
        switch try raw(key, secret: false) {
        case nil: return value
        case let b as Bool: return b
        case let s as String:
            switch s.lowercased() {
            case "true", "yes", "on", "1": return true
            case "false", "no", "off", "0": return false
            default: throw ConfigError(key: key, reason: "must be true or false, got '\(s)'")
            }
        default: throw ConfigError(key: key, reason: "must be true or false")
        }
    }

    public func intList(_ key: String, default value: [Int], range: ClosedRange<Int>? = nil) throws -> [Int] {
        let items: [Int]
        switch try raw(key, secret: false) {
        case nil: items = value
        case let list as [Any]:
            items = try list.map {
                if let i = $0 as? Int { return i }
                throw ConfigError(key: key, reason: "must be a list of whole numbers")
            }
        case let s as String:
            items = try s.split(separator: ",").map {
                guard let i = Int($0.trimmingCharacters(in: .whitespaces)) else {
                    throw ConfigError(key: key, reason: "must be a comma-separated list of whole numbers, got '\(s)'")
                }
                return i
            }
        default: throw ConfigError(key: key, reason: "must be a list of whole numbers")
        }
        if let range, let bad = items.first(where: { !range.contains($0) }) {
            throw ConfigError(key: key, reason: "every entry must be between \(range.lowerBound) and \(range.upperBound), got \(bad)")
        }
        return items
    }

    public func stringList(_ key: String, default value: [String]) throws -> [String] {
        switch try raw(key, secret: false) {
        case nil: return value
        case let list as [Any]:
            return try list.map {
                if let s = $0 as? String { return s }
                throw ConfigError(key: key, reason: "must be a list of strings")
            }
        case let s as String:
            return s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        default: throw ConfigError(key: key, reason: "must be a list of strings")
        }
    }

    public func choice<T: RawRepresentable>(_ key: String, default value: T) throws -> T where T.RawValue == String, T: CaseIterable {
        let text = try string(key, default: value.rawValue)
        guard let result = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigError(key: key, reason: "must be one of \(allowed), got '\(text)'")
        }
        return result
    }

    /// Raw mapping below `prefix` (for open-ended maps such as test phone numbers).
    public func map(_ prefix: String) -> [String: Any] {
        lock.lock(); defer { lock.unlock() }
        var out: [String: Any] = [:]
        for (key, value) in values where key.hasPrefix(prefix + ".") {
            readKeys.insert(key)
            out[String(key.dropFirst(prefix.count + 1))] = value
        }
        return out
    }

    /// Keys present in the file that no accessor has read: typos, or keys of another version.
    public func unknownKeys() -> [String] {
        lock.lock(); defer { lock.unlock() }
        return values.keys.filter { !readKeys.contains($0) }.sorted()
    }
}
