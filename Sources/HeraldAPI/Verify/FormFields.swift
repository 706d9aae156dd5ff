import Foundation

/// The parameters of a Twilio-style request: `application/x-www-form-urlencoded` (the body of a
/// POST, the query of a GET), read strictly: a parameter that is neither one the route takes
/// nor one of Twilio's that it may ignore answers 60200 naming it (an ``APIFailure/invalid(field:reason:)``,
/// which the `/v2` family writes as Twilio's 60200). Pure, so that the fuzz target
/// (fuzz/targets/apidecoders.swift) runs it.
struct FormFields: Sendable {
    private var values: [String: String]

    init(_ text: String, accepted: Set<String>, ignored: Set<String>) throws {
        var values: [String: String] = [:]
        for raw in text.split(separator: "&") where !raw.isEmpty {
            let (name, value) = try Self.pair(raw)
            if ignored.contains(name) { continue }
            // PostgreSQL's text cannot hold U+0000: refused here, for every route, as the client's mistake.
            guard !value.utf8.contains(0) else { throw APIFailure.invalid(field: APIFailure.printableName(name), reason: "must not contain U+0000") }
            guard accepted.contains(name) else {
                throw APIFailure.invalid(field: APIFailure.printableName(name), reason: "not supported")
            }
            values[name] = value
        }
        self.values = values
    }

    /// Every name and value of a form-encoded text, in order, decoded; a name given twice is
    /// there twice.
    static func pairs(_ text: String) throws -> [(String, String)] {
        try text.split(separator: "&").filter { !$0.isEmpty }.map(pair)
    }

    /// One `name=value` of a form-encoded text, decoded (`+` a space, then percent escapes).
    private static func pair(_ raw: Substring) throws -> (String, String) {
        let parts = raw.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
            throw APIFailure.invalid(field: "body", reason: "not form-encoded")
        }
        return (name, value)
    }

    private static func decode(_ part: Substring) -> String? {
        String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }

    func string(_ name: String, maxLength: Int = 256) throws -> String? {
        guard let value = values[name] else { return nil }
        guard value.utf8.count <= maxLength else { throw APIFailure.invalid(field: name, reason: "longer than \(maxLength) bytes") }
        return value
    }

    func required(_ name: String, maxLength: Int = 256) throws -> String {
        guard let value = try string(name, maxLength: maxLength), !value.isEmpty else { throw APIFailure.invalid(field: name, reason: "required") }
        return value
    }

    func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw APIFailure.invalid(field: name, reason: "an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func bool(_ name: String) throws -> Bool? {
        guard let text = values[name] else { return nil }
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw APIFailure.invalid(field: name, reason: "true or false")
        }
    }
}
