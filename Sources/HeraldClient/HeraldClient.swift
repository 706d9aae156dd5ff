import AMQP
import Foundation
import HeraldRuntime
import Logging
import Tracing

/// What a front API written in Swift links to enqueue Herald jobs. Every `enqueue` returns
/// only after RabbitMQ confirmed the message (publisher confirms), and is published
/// `mandatory`, so a job no queue would take is an error, not a silent loss.
public final class HeraldClient: Sendable {
    public let connection: AMQPConnection
    public let topology: HeraldTopology
    /// The tracer of the `publish` spans; nil: none (nothing spent on them). By default the
    /// process's (swift-distributed-tracing's `InstrumentationSystem`) when the client is made,
    /// as AsyncHTTPClient takes it: make the client after bootstrapping tracing.
    public let tracer: (any Tracer)?
    private let ownsConnection: Bool

    /// Connects with its own AMQP connection (started here, closed by ``close()``).
    public init(configuration: BrokerConfiguration, tracer: (any Tracer)? = InstrumentationSystem.tracer, logger: Logger) throws {
        self.topology = HeraldTopology(namespace: configuration.namespace)
        self.connection = AMQPConnection(configuration: try configuration.connectionConfiguration(name: "herald-client"), logger: logger)
        self.tracer = tracer
        self.ownsConnection = true
        connection.start()
    }

    /// Uses a connection the caller owns and runs.
    public init(connection: AMQPConnection, namespace: String = "herald", tracer: (any Tracer)? = InstrumentationSystem.tracer) {
        self.topology = HeraldTopology(namespace: namespace)
        self.connection = connection
        self.tracer = tracer
        self.ownsConnection = false
    }

    /// Publishes `job` to exchange `herald` with routing key `Job.name`, in a `publish herald`
    /// producer span of ``tracer`` (herald-api's when its tracing is on, a Swift front API's
    /// own), whose W3C context goes in the message's `traceparent` header for the worker's spans.
    /// - Parameters:
    ///   - messageID: the idempotency key; the same id is handled once. A UUID by default.
    ///   - correlationID: carried through the worker's logs to the provider call.
    /// - Returns: the message id.
    @discardableResult
    public func enqueue<Job: HeraldJob>(_ job: Job, messageID: String = UUID().uuidString.lowercased(), correlationID: String? = nil) async throws -> String {
        let body: [UInt8]
        do {
            body = try job.encodedBody(messageID: messageID)
        } catch {
            throw HeraldClientError.invalidJob(error.reason)
        }
        let envelope = JobEnvelope(messageID: messageID, typeName: Job.typeName, correlationID: correlationID, timestamp: Date())
        try await PublishSpan.run(tracer: tracer, exchange: topology.jobsExchange, routingKey: Job.name, messageID: messageID,
                                  correlationID: correlationID, jobType: Job.typeName) { headers in
            try await publishRaw(body: body, routingKey: Job.name, properties: envelope.properties(headers: headers))
        }
        return messageID
    }

    /// Publishes a body as it is (for `heraldctl enqueue --json` and tests of bad input).
    public func publishRaw(body: [UInt8], routingKey: String, properties: AMQPProperties) async throws {
        do {
            try await connection.publish(body: body, exchange: topology.jobsExchange, routingKey: routingKey, properties: properties, mandatory: true)
        } catch {
            if case .unroutable = error { throw HeraldClientError.noQueue(routingKey: routingKey) }
            throw HeraldClientError.broker(error)
        }
    }

    public func close() async {
        if ownsConnection { await connection.close() }
    }
}

/// Why an enqueue failed.
public enum HeraldClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The job does not pass its own validation; nothing was published.
    case invalidJob(String)
    /// No queue is bound for this routing key: run `heraldctl topology declare`.
    case noQueue(routingKey: String)
    case broker(AMQPError)

    public var description: String {
        switch self {
        case .invalidJob(let reason): "invalid job: \(reason)"
        case .noQueue(let key): "no queue takes routing key '\(key)'; declare the topology first (heraldctl topology declare)"
        case .broker(let error): "broker: \(error)"
        }
    }
}
