import Foundation
import HeraldRuntime

/// A JSON value as read, booleans apart from numbers (JSONDecoder does not turn 1 into true).
enum JSONValue: Decodable, Sendable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }
}

/// The fields of a JSON body herald-api reads by hand (a webhook receipt's; `/v1`'s are read by
/// the generated code), read strictly: a field not in the route's list, a value of the wrong
/// type or over its length is refused (400) naming the field, never echoing it. A field given as
/// null is absent.
struct JSONFields: Sendable {
    private let values: [String: JSONValue]
    private let path: String

    /// Parses a body as a JSON object whose keys are all in `allowed` (an empty body is an
    /// empty object). Pure, so that the fuzz target (fuzz/targets/apidecoders.swift) runs it.
    static func parse(_ body: Data, allowed: Set<String>) throws -> JSONFields {
        if body.isEmpty { return try JSONFields(values: [:], allowed: allowed, path: "") }
        let decoded: JSONValue
        do {
            decoded = try JSONDecoder().decode(JSONValue.self, from: body)
        } catch {
            throw APIFailure.invalid(field: nil, reason: "the body is not valid JSON")
        }
        guard case .object(let object) = decoded else { throw APIFailure.invalid(field: nil, reason: "the body must be a JSON object") }
        return try JSONFields(values: object, allowed: allowed, path: "")
    }

    private init(values: [String: JSONValue], allowed: Set<String>, path: String) throws {
        if let unknown = values.keys.filter({ !allowed.contains($0) }).sorted().first {
            let name = APIFailure.printableName(unknown)
            throw APIFailure.invalid(field: path + name, reason: "unknown field '\(path + name)'")
        }
        self.values = values.filter { if case .null = $0.value { false } else { true } }
        self.path = path
    }

    private func name(_ key: String) -> String { path + key }

    func string(_ key: String, maxLength: Int = 256) throws -> String? {
        guard let value = values[key] else { return nil }
        guard case .string(let text) = value else { throw APIFailure.invalid(field: name(key), reason: "\(name(key)) must be a string") }
        return try FieldRule.text(text, name(key), maxLength: maxLength)
    }

    func required(_ key: String, maxLength: Int = 256) throws -> String {
        try FieldRule.required(string(key, maxLength: maxLength), name(key), maxLength: maxLength)
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = values[key] else { return nil }
        guard case .bool(let flag) = value else { throw APIFailure.invalid(field: name(key), reason: "\(name(key)) must be true or false") }
        return flag
    }

    func int(_ key: String, range: ClosedRange<Int>) throws -> Int? {
        guard let value = values[key] else { return nil }
        guard case .number(let number) = value, number.rounded() == number, let int = Int(exactly: number), range.contains(int) else {
            throw APIFailure.invalid(field: name(key), reason: "\(name(key)) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return int
    }

    func requiredChoice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws -> T where T.RawValue == String {
        try FieldRule.requiredChoice(string(key, maxLength: 64), name(key), type)
    }

    func object(_ key: String, allowed: Set<String>) throws -> JSONFields? {
        guard let value = values[key] else { return nil }
        guard case .object(let object) = value else { throw APIFailure.invalid(field: name(key), reason: "\(name(key)) must be an object") }
        return try JSONFields(values: object, allowed: allowed, path: name(key) + ".")
    }

    /// A job's own rule, as a refusal that names the field (the job's reason names it).
    static func validated<Job: HeraldJob>(_ job: Job) throws -> Job {
        do {
            try job.validate()
        } catch {
            // Every rule's reason begins with the field it is about (`phone_number must be …`).
            let first = error.reason.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "." }
            throw APIFailure.invalid(field: first.isEmpty ? nil : String(first), reason: error.reason)
        }
        return job
    }
}
