/// The rules a request value keeps beyond its type (docs/api.md, "The contract"): a length
/// counted in UTF-8 bytes, no U+0000 (PostgreSQL's text cannot hold it), a required text not
/// empty, an integer in its range, a choice among the job's own values. docs/openapi.yaml
/// states each one (`maxLength`, `minimum`, `enum`); the generated decoding checks types and
/// fields only, so `/v1`'s handlers apply these, and the receipts' ``JSONFields`` too. Each
/// refusal names the field, never its value.
enum FieldRule {
    static func text(_ value: String?, _ name: String, maxLength: Int = 256) throws -> String? {
        guard let value else { return nil }
        guard value.utf8.count <= maxLength else { throw APIFailure.invalid(field: name, reason: "\(name) is longer than \(maxLength) bytes") }
        guard !value.utf8.contains(0) else { throw APIFailure.invalid(field: name, reason: "\(name) must not contain U+0000") }
        return value
    }

    static func required(_ value: String?, _ name: String, maxLength: Int = 256) throws -> String {
        guard let text = try text(value, name, maxLength: maxLength), !text.isEmpty else { throw missing(name) }
        return text
    }

    static func missing(_ name: String) -> APIFailure {
        APIFailure.invalid(field: name, reason: "missing required field '\(name)'")
    }

    static func int(_ value: Int?, _ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let value else { return nil }
        guard range.contains(value) else {
            throw APIFailure.invalid(field: name, reason: "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// A value given as text or as a generated enum, as the job's own enum. The generated enum of
    /// a nullable choice has a case for `""`; no job's enum has, so it is refused here.
    static func choice<T: RawRepresentable & CaseIterable>(_ raw: String?, _ name: String, _: T.Type) throws -> T? where T.RawValue == String {
        guard let raw else { return nil }
        guard let value = T(rawValue: raw) else {
            throw APIFailure.invalid(field: name, reason: "\(name) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return value
    }

    static func requiredChoice<T: RawRepresentable & CaseIterable>(_ raw: String?, _ name: String, _ type: T.Type) throws -> T where T.RawValue == String {
        guard let value = try choice(raw, name, type) else { throw missing(name) }
        return value
    }
}
