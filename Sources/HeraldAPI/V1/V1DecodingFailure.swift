import Foundation

/// The generated decoders' refusals as `/v1` has always answered them: 400 naming the field by
/// its path (`action_code_settings.url`), never its value. Pure: the fuzz target `apidecoders` runs it.
enum V1DecodingFailure {
    /// What ``V1RequestTime`` says of a text that is not an RFC 3339 time.
    static let notATime = "not an RFC 3339 time"

    static func failure(_ error: DecodingError) -> APIFailure {
        switch error {
        case .keyNotFound(let key, let context):
            let field = name(context.codingPath + [key])
            return .invalid(field: field, reason: "missing required field '\(field ?? key.stringValue)'")
        case .valueNotFound(_, let context):
            guard let field = name(context.codingPath) else { return .invalid(field: nil, reason: "the body must be a JSON object") }
            return .invalid(field: field, reason: "missing required field '\(field)'")
        case .typeMismatch(let type, let context):
            guard let field = name(context.codingPath) else { return .invalid(field: nil, reason: "the body must be a JSON object") }
            return .invalid(field: field, reason: "\(field) must be \(kind(type))")
        case .dataCorrupted(let context):
            guard let field = name(context.codingPath) else { return .invalid(field: nil, reason: "the body is not valid JSON") }
            // OpenAPIRuntime's refusal of a key the schema does not list (`additionalProperties: false`).
            if context.debugDescription.hasPrefix("Additional properties are disabled") {
                return .invalid(field: field, reason: "unknown field '\(field)'")
            }
            if context.debugDescription == notATime {
                return .invalid(field: field, reason: "\(field) must be an RFC 3339 time (2026-01-02T03:04:05Z)")
            }
            return .invalid(field: field, reason: "\(field) is not a value docs/openapi.yaml allows there")
        @unknown default:
            return .invalid(field: nil, reason: "the body does not match docs/openapi.yaml")
        }
    }

    /// A coding path as a field's name: its keys joined by dots, array positions left out (the
    /// array is the field), each key printable and bounded (a key can come from the client).
    static func name(_ path: [any CodingKey]) -> String? {
        let keys = path.filter { $0.intValue == nil }.map { APIFailure.printableName($0.stringValue) }
        return keys.isEmpty ? nil : keys.joined(separator: ".")
    }

    static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type: "an integer"
        case is Double.Type: "a number"
        default: "an \(String(describing: type).hasPrefix("Array") ? "array" : "object")"
        }
    }
}
