/// Exchanges, queues and bindings to declare, idempotently.
///
/// The topology given to `AMQPConnection.init` is declared again after every reconnect.
public struct AMQPTopology: Sendable, Equatable {
    /// An exchange declaration.
    public struct Exchange: Sendable, Equatable {
        public var name: String
        public var type: String
        public var durable: Bool
        public var autoDelete: Bool
        public var `internal`: Bool
        public var arguments: AMQPTable

        public init(name: String, type: String = "topic", durable: Bool = true, autoDelete: Bool = false,
                    internal: Bool = false, arguments: AMQPTable = [:]) {
            self.name = name
            self.type = type
            self.durable = durable
            self.autoDelete = autoDelete
            self.internal = `internal`
            self.arguments = arguments
        }
    }

    /// A queue declaration.
    public struct Queue: Sendable, Equatable {
        public var name: String
        public var durable: Bool
        public var exclusive: Bool
        public var autoDelete: Bool
        public var arguments: AMQPTable

        public init(name: String, durable: Bool = true, exclusive: Bool = false, autoDelete: Bool = false,
                    arguments: AMQPTable = [:]) {
            self.name = name
            self.durable = durable
            self.exclusive = exclusive
            self.autoDelete = autoDelete
            self.arguments = arguments
        }
    }

    /// A queue-to-exchange binding.
    public struct Binding: Sendable, Equatable {
        public var queue: String
        public var exchange: String
        public var routingKey: String
        public var arguments: AMQPTable

        public init(queue: String, exchange: String, routingKey: String, arguments: AMQPTable = [:]) {
            self.queue = queue
            self.exchange = exchange
            self.routingKey = routingKey
            self.arguments = arguments
        }
    }

    public var exchanges: [Exchange]
    public var queues: [Queue]
    public var bindings: [Binding]

    public init(exchanges: [Exchange] = [], queues: [Queue] = [], bindings: [Binding] = []) {
        self.exchanges = exchanges
        self.queues = queues
        self.bindings = bindings
    }

    /// True when there is nothing to declare.
    public var isEmpty: Bool { exchanges.isEmpty && queues.isEmpty && bindings.isEmpty }
}
