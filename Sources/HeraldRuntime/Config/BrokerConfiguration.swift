import AMQP

/// `amqp.*`: the RabbitMQ connection and the topology Herald declares.
public struct BrokerConfiguration: Sendable {
    public enum QueueType: String, Sendable, CaseIterable { case quorum, classic }

    public var url: String = "amqp://guest:guest@127.0.0.1:55672/%2f"
    /// Prefix of every exchange and queue name (`herald`, `herald.sms`, …).
    public var namespace: String = "herald"
    public var heartbeatSeconds: Int = 10
    public var prefetch: Int = 64
    public var confirmWindow: Int = 1024
    public var queueType: QueueType = .quorum
    /// Broker-side redelivery cap for a message that keeps crashing consumers (quorum only).
    public var deliveryLimit: Int = 20
    public var tlsCAFile: String = ""
    public var tlsVerifyPeer: Bool = true
    public var tlsCertFile: String = ""
    public var tlsKeyFile: String = ""

    public init(url: String = "amqp://guest:guest@127.0.0.1:55672/%2f", namespace: String = "herald") {
        self.url = url
        self.namespace = namespace
    }

    init(source: ConfigSource) throws {
        self.url = try source.string("amqp.url", default: url, secret: true)
        self.namespace = try source.string("amqp.namespace", default: namespace)
        guard !namespace.isEmpty, namespace.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) else {
            throw ConfigError(key: "amqp.namespace", reason: "must be non-empty letters, digits, '-', '_' or '.'")
        }
        self.heartbeatSeconds = try source.int("amqp.heartbeat_seconds", default: heartbeatSeconds, range: 0...600)
        self.prefetch = try source.int("amqp.prefetch", default: prefetch, range: 1...65535)
        self.confirmWindow = try source.int("amqp.confirm_window", default: confirmWindow, range: 1...1_000_000)
        self.queueType = try source.choice("amqp.queue_type", default: queueType)
        self.deliveryLimit = try source.int("amqp.delivery_limit", default: deliveryLimit, range: 1...1000)
        self.tlsCAFile = try source.string("amqp.tls.ca_file", default: "")
        self.tlsVerifyPeer = try source.bool("amqp.tls.verify_peer", default: true)
        self.tlsCertFile = try source.string("amqp.tls.cert_file", default: "")
        self.tlsKeyFile = try source.string("amqp.tls.key_file", default: "")
        _ = try connectionConfiguration(name: "check")
    }

    /// The AMQP library's configuration; throws a ``ConfigError`` naming `amqp.url`.
    public func connectionConfiguration(name: String) throws -> AMQPConfiguration {
        let parsed: [AMQPURL]
        do {
            parsed = try AMQPURL.list(url)
        } catch {
            throw ConfigError(key: "amqp.url", reason: "\(error)")
        }
        var tls = AMQPTLSConfiguration()
        tls.caCertificatePath = tlsCAFile.isEmpty ? nil : tlsCAFile
        tls.verifyPeer = tlsVerifyPeer
        tls.verifyHostname = tlsVerifyPeer
        tls.clientCertificatePath = tlsCertFile.isEmpty ? nil : tlsCertFile
        tls.clientKeyPath = tlsKeyFile.isEmpty ? nil : tlsKeyFile
        var configuration = AMQPConfiguration(url: parsed[0])
        configuration.urls = parsed
        configuration.tls = tls
        configuration.heartbeat = heartbeatSeconds
        configuration.confirmWindow = confirmWindow
        configuration.connectionName = name
        return configuration
    }
}
