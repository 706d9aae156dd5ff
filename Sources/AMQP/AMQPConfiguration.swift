/// Everything an `AMQPConnection` needs to connect and to behave under load and failure.
public struct AMQPConfiguration: Sendable {
    /// The nodes of the broker (amqp:// or amqps://), at least one: a connection tries them in
    /// a shuffled order, and after losing one (or failing to reach it) the next at once; a
    /// whole round that fails waits out the backoff.
    public var urls: [AMQPURL]
    /// The first node (the only one, usually).
    public var url: AMQPURL {
        get { urls[0] }
        set { urls = [newValue] }
    }
    /// TLS settings, used when `url.useTLS`.
    public var tls: AMQPTLSConfiguration
    /// Heartbeat interval in seconds requested from the broker; 0 turns heartbeats off.
    public var heartbeat: Int
    /// Limit for TCP connect, TLS handshake and login.
    public var connectTimeout: Duration
    /// First delay before reconnecting; doubles up to `reconnectMaxDelay`.
    public var reconnectInitialDelay: Duration
    /// Longest delay between reconnect attempts.
    public var reconnectMaxDelay: Duration
    /// Most publishes awaiting a broker confirm at once; further publishes wait.
    public var confirmWindow: Int
    /// Most publishes waiting to be sent (behind the confirm window, or for a connection): one
    /// more fails at once with `.overloaded` instead of queueing without bound while the broker
    /// is away or has blocked the connection.
    public var maxQueuedPublishes = 4096
    /// Shown by the broker (management UI, rabbitmqctl list_connections client_properties).
    public var connectionName: String
    /// Try ``urls`` in a shuffled order (so a fleet spreads over the nodes); false: as listed (tests).
    public var shuffleNodes = true

    public init(url: AMQPURL, tls: AMQPTLSConfiguration = AMQPTLSConfiguration(), heartbeat: Int = 10,
                connectTimeout: Duration = .seconds(5), reconnectInitialDelay: Duration = .milliseconds(100),
                reconnectMaxDelay: Duration = .seconds(5), confirmWindow: Int = 1024,
                connectionName: String = "herald") {
        self.urls = [url]
        self.tls = tls
        self.heartbeat = heartbeat
        self.connectTimeout = connectTimeout
        self.reconnectInitialDelay = reconnectInitialDelay
        self.reconnectMaxDelay = reconnectMaxDelay
        self.confirmWindow = confirmWindow
        self.connectionName = connectionName
    }
}
