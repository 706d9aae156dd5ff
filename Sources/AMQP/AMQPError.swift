/// Errors thrown by the AMQP library. Descriptions never contain credentials.
public enum AMQPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL could not be parsed; the associated text says why (without the password).
    case invalidURL(String)
    /// Connecting (TCP, TLS or login) failed.
    case connectionFailed(String)
    /// The broker closed the connection.
    case connectionClosed(code: Int, text: String)
    /// The broker closed a channel, e.g. 404 NOT_FOUND or 406 PRECONDITION_FAILED on a declare.
    case channelClosed(code: Int, text: String)
    /// The broker answered a publish with basic.nack.
    case publishNacked
    /// A mandatory publish could not be routed to any queue (basic.return).
    case unroutable(code: Int, text: String)
    /// The delivery came on a connection or channel that no longer exists; the broker redelivers it.
    case staleDelivery
    /// The connection was closed by `close()`.
    case closed
    /// The operation did not finish in time.
    case timeout
    /// More publishes wait to be sent than `AMQPConfiguration.maxQueuedPublishes`: this one was not queued.
    case overloaded

    public var description: String {
        switch self {
        case .invalidURL(let reason): return "invalid AMQP URL: \(reason)"
        case .connectionFailed(let reason): return "AMQP connection failed: \(reason)"
        case .connectionClosed(let code, let text): return "AMQP connection closed by broker: \(code) \(text)"
        case .channelClosed(let code, let text): return "AMQP channel closed by broker: \(code) \(text)"
        case .publishNacked: return "AMQP publish was nacked by the broker"
        case .unroutable(let code, let text): return "AMQP mandatory publish was returned: \(code) \(text)"
        case .staleDelivery: return "AMQP delivery belongs to a connection or channel that is gone"
        case .closed: return "AMQP connection is closed"
        case .timeout: return "AMQP operation timed out"
        case .overloaded: return "AMQP publish not queued: too many publishes wait to be sent"
        }
    }
}
