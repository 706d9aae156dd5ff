import CRabbitMQ
import Synchronization

/// A message a publisher, consumer or caller sends to the connection thread.
enum Command: Sendable {
    case publish(PublishRequest)
    case admin(AdminRequest)
    case settle(SettleRequest)
    case consume(ConsumerRegistration)
    case cancelConsumer(id: UInt64, done: CheckedContinuation<Void, Never>?)
    case close
}

/// `publish(…)` on its way to the connection thread.
struct PublishRequest: Sendable {
    var body: [UInt8]
    var exchange: String
    var routingKey: String
    var properties: AMQPProperties
    var mandatory: Bool
    /// Acked by the connection thread once the broker confirms the publish (``AMQPConnection/publish(body:exchange:routingKey:properties:thenAck:)``).
    var thenAck: SettleTarget? = nil
    var continuation: Completion
}

/// A delivery to settle, by where it came from.
struct SettleTarget: Sendable {
    var channel: UInt16
    var generation: UInt64
    var deliveryTag: UInt64

    init(of delivery: AMQPDelivery) {
        channel = delivery.channel
        generation = delivery.generation
        deliveryTag = delivery.deliveryTag
    }
}

/// An admin operation (run on channel 3) on its way to the connection thread.
struct AdminRequest: Sendable {
    var steps: [AdminStep]
    var continuation: CheckedContinuation<Result<AdminResult, AMQPError>, Never>
}

enum AdminStep: Sendable {
    case declareExchange(AMQPTopology.Exchange)
    case declareQueue(AMQPTopology.Queue)
    case bind(AMQPTopology.Binding)
    case passiveDeclareQueue(String)
    case get(String)
    case purge(String)
    case deleteQueue(String)
    case deleteExchange(String)
}

enum AdminResult: Sendable {
    case done
    case queueState(AMQPQueueState?)
    case delivery(AMQPDelivery?)
    case count(Int)
}

/// ack / nack / reject of a delivery.
struct SettleRequest: Sendable {
    enum Kind: Sendable, Equatable {
        case ack
        case nack(requeue: Bool)
        case reject(requeue: Bool)
    }
    var channel: UInt16
    var generation: UInt64
    var deliveryTag: UInt64
    var kind: Kind
    var continuation: Completion
}

/// A new consumer on its way to the connection thread.
struct ConsumerRegistration: Sendable {
    var id: UInt64
    var queue: String
    var prefetch: UInt16
    /// Bodies declared larger than this are drained unbuffered and delivered as oversize.
    var maxBodyBytes: Int?
    var sink: ConsumerSink
}

/// The lock-protected command queue between callers and the connection thread, plus the
/// eventfd that wakes the thread out of `poll()`. The eventfd is only written when the
/// thread said it is about to sleep, so a busy thread costs callers no system call.
final class Mailbox: Sendable {
    private struct State {
        var commands: [Command] = []
        var sleeping = false
        var closed = false
    }

    private let state = Mutex(State())
    let wakeFD: Int32

    init() {
        wakeFD = herald_eventfd()
        precondition(wakeFD >= 0, "eventfd() failed")
    }

    deinit {
        close(wakeFD)
    }

    /// Queues a command. Returns it back when the mailbox is closed (the caller fails it).
    func post(_ command: Command) -> Command? {
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.commands.append(command)
            let wake = state.sleeping
            state.sleeping = false
            return (true, wake)
        }
        if wake { herald_eventfd_signal(wakeFD) }
        return accepted ? nil : command
    }

    /// Takes every queued command (connection thread only).
    func take() -> [Command] {
        state.withLock { state in
            guard !state.commands.isEmpty else { return [] }
            let commands = state.commands
            state.commands = []
            state.commands.reserveCapacity(64)
            return commands
        }
    }

    /// Marks the thread as about to sleep; false when commands are waiting (don't sleep).
    func prepareToSleep() -> Bool {
        state.withLock { state in
            if !state.commands.isEmpty { return false }
            state.sleeping = true
            return true
        }
    }

    /// The thread is awake again.
    func awake() {
        state.withLock { $0.sleeping = false }
    }

    /// Closes the mailbox and returns what was still queued (connection thread only).
    func closeAndDrain() -> [Command] {
        state.withLock { state in
            state.closed = true
            let commands = state.commands
            state.commands = []
            return commands
        }
    }
}
