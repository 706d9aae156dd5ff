import CRabbitMQ
import Foundation

// Conversion between AMQPProperties and amqp_basic_properties_t.

extension AMQPProperties {
    func cProperties(in arena: CArena) -> amqp_basic_properties_t {
        var p = amqp_basic_properties_t()
        var flags: amqp_flags_t = 0
        func set(_ value: String?, _ flag: amqp_flags_t, _ field: WritableKeyPath<amqp_basic_properties_t, amqp_bytes_t>) {
            guard let value else { return }
            p[keyPath: field] = arena.bytes(value)
            flags |= flag
        }
        set(contentType, HERALD_BASIC_CONTENT_TYPE_FLAG, \.content_type)
        set(contentEncoding, HERALD_BASIC_CONTENT_ENCODING_FLAG, \.content_encoding)
        set(correlationID, HERALD_BASIC_CORRELATION_ID_FLAG, \.correlation_id)
        set(replyTo, HERALD_BASIC_REPLY_TO_FLAG, \.reply_to)
        set(expiration, HERALD_BASIC_EXPIRATION_FLAG, \.expiration)
        set(messageID, HERALD_BASIC_MESSAGE_ID_FLAG, \.message_id)
        set(type, HERALD_BASIC_TYPE_FLAG, \.type)
        set(userID, HERALD_BASIC_USER_ID_FLAG, \.user_id)
        set(appID, HERALD_BASIC_APP_ID_FLAG, \.app_id)
        if !headers.isEmpty {
            p.headers = AMQPFieldValue.cTable(headers, in: arena)
            flags |= HERALD_BASIC_HEADERS_FLAG
        }
        p.delivery_mode = persistent ? 2 : 1
        flags |= HERALD_BASIC_DELIVERY_MODE_FLAG
        if let priority {
            p.priority = priority
            flags |= HERALD_BASIC_PRIORITY_FLAG
        }
        if let timestamp {
            p.timestamp = UInt64(max(0, timestamp.timeIntervalSince1970.rounded(.down)))
            flags |= HERALD_BASIC_TIMESTAMP_FLAG
        }
        p._flags = flags
        return p
    }

    init(_ p: amqp_basic_properties_t) {
        let flags = p._flags
        func get(_ flag: amqp_flags_t, _ field: amqp_bytes_t) -> String? {
            flags & flag != 0 ? field.string : nil
        }
        self.init(
            contentType: get(HERALD_BASIC_CONTENT_TYPE_FLAG, p.content_type),
            contentEncoding: get(HERALD_BASIC_CONTENT_ENCODING_FLAG, p.content_encoding),
            correlationID: get(HERALD_BASIC_CORRELATION_ID_FLAG, p.correlation_id),
            replyTo: get(HERALD_BASIC_REPLY_TO_FLAG, p.reply_to),
            expiration: get(HERALD_BASIC_EXPIRATION_FLAG, p.expiration),
            messageID: get(HERALD_BASIC_MESSAGE_ID_FLAG, p.message_id),
            type: get(HERALD_BASIC_TYPE_FLAG, p.type),
            userID: get(HERALD_BASIC_USER_ID_FLAG, p.user_id),
            appID: get(HERALD_BASIC_APP_ID_FLAG, p.app_id),
            headers: flags & HERALD_BASIC_HEADERS_FLAG != 0 ? AMQPFieldValue.table(p.headers) : [:],
            persistent: flags & HERALD_BASIC_DELIVERY_MODE_FLAG != 0 ? p.delivery_mode == 2 : false,
            priority: flags & HERALD_BASIC_PRIORITY_FLAG != 0 ? p.priority : nil,
            timestamp: flags & HERALD_BASIC_TIMESTAMP_FLAG != 0 ? Date(timeIntervalSince1970: TimeInterval(p.timestamp)) : nil
        )
    }
}
