import AMQP
import HeraldRuntime

extension AMQPProperties {
    /// The `x-herald-dead-letter` stamp of a dead letter (nil on anything else).
    var deadLetterStamp: DeadLetterStamp? { DeadLetterStamp(headers: headers) }
}
