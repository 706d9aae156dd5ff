import AMQP
import Foundation

extension AMQPFieldValue {
    /// The value as JSONSerialization takes it: timestamps as ISO 8601, bytes as base64.
    var jsonValue: Any {
        switch self {
        case .bool(let b): b
        case .int(let i): i
        case .double(let d): d
        case .string(let s): s
        case .bytes(let bytes): Data(bytes).base64EncodedString()
        case .timestamp(let date): date.iso8601
        case .array(let values): values.map(\.jsonValue)
        case .table(let table): table.mapValues(\.jsonValue)
        case .void: NSNull()
        }
    }
}
