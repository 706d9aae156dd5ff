import Tracing

/// The attribute keys of OpenTelemetry's semantic conventions that Herald's spans use
/// (messaging for RabbitMQ, HTTP client and server, errors), and Herald's own (`herald.*`).
/// Written out rather than taken from swift-otel-semantic-conventions, whose messaging part
/// is experimental and a large generated module for these few keys.
public enum TraceKey {
    public static let messagingSystem = "messaging.system"
    public static let operationName = "messaging.operation.name"
    public static let operationType = "messaging.operation.type"
    public static let destination = "messaging.destination.name"
    public static let routingKey = "messaging.rabbitmq.destination.routing_key"
    public static let deliveryTag = "messaging.rabbitmq.message.delivery_tag"
    public static let messageID = "messaging.message.id"
    public static let conversationID = "messaging.message.conversation_id"
    public static let consumerGroup = "messaging.consumer.group.name"
    public static let bodySize = "messaging.message.body.size"
    public static let serverAddress = "server.address"
    public static let serverPort = "server.port"
    public static let httpMethod = "http.request.method"
    public static let httpStatus = "http.response.status_code"
    public static let httpRoute = "http.route"
    public static let errorType = "error.type"
    public static let jobType = "herald.job.type"
    public static let attempt = "herald.job.attempt"
    public static let channel = "herald.channel"
    public static let provider = "herald.provider"
    public static let providerResult = "herald.provider.result"
}

extension SpanAttributes {
    /// A RabbitMQ operation's attributes: `messaging.system`, the operation's name and type,
    /// the destination (`exchange:routing key`, and `:queue` for a consumer) and the routing key.
    public mutating func messaging(operation: String, type: String, exchange: String, routingKey: String, queue: String? = nil) {
        self[TraceKey.messagingSystem] = "rabbitmq"
        self[TraceKey.operationName] = operation
        self[TraceKey.operationType] = type
        self[TraceKey.destination] = queue.map { "\(exchange):\(routingKey):\($0)" } ?? "\(exchange):\(routingKey)"
        self[TraceKey.routingKey] = routingKey
        if let queue { self[TraceKey.consumerGroup] = queue }
    }
}
