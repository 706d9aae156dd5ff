import AMQP
import ServiceLifecycle

/// Runs an ``AMQPConnection`` as a `Service`: started with the group, closed after the
/// services that use it (which the group stops first, in reverse order) have finished.
public struct AMQPConnectionService: Service {
    public let connection: AMQPConnection

    public init(_ connection: AMQPConnection) { self.connection = connection }

    public func run() async throws {
        connection.start()
        try? await gracefulShutdown()
        await connection.close()
    }
}
