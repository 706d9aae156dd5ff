import Foundation

/// A decoding error as a reason that names the field (`client.ip`) and never its value: how the
/// worker's job decoder and herald-api's request decoders answer a body that does not fit.
public enum DecodingReason {
    public static func of(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            var keys = context.codingPath
            if let last { keys.append(last) }
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing required field '\(path(context, key))'"
        case .typeMismatch(let type, let context):
            return "field '\(path(context))' has the wrong type (expected \(typeName(type)))"
        case .valueNotFound(let type, let context):
            return "field '\(path(context))' must not be null (expected \(typeName(type)))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "body is not valid JSON" : "field '\(path(context))' has an invalid value"
        @unknown default:
            return "body does not match the schema"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "boolean"
        case is Int.Type, is Double.Type: "number"
        default: "object"
        }
    }
}
