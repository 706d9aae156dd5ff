import Foundation

/// A value in an AMQP field table (message headers, queue and exchange arguments).
///
/// Integers of every width decode as `.int`, 32-bit floats and decimals as `.double`,
/// field kind `x` as `.bytes`. Timestamps travel in whole seconds.
public enum AMQPFieldValue: Sendable, Equatable, Hashable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case timestamp(Date)
    case array([AMQPFieldValue])
    case table([String: AMQPFieldValue])
    case void
}

/// An AMQP field table.
public typealias AMQPTable = [String: AMQPFieldValue]
