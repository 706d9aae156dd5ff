import Foundation
import Logging
import Synchronization

/// One AMQP 0-9-1 connection to RabbitMQ, owned by one dedicated thread.
///
/// rabbitmq-c is not thread-safe, so every call posts a command into a lock-protected
/// mailbox and the connection thread does the I/O: it publishes (channel 2, confirm mode),
/// consumes and acks (channel 1), runs admin operations (channel 3), services heartbeats and
/// reconnects with exponential backoff after a failure, re-declaring the topology given here,
/// re-publishing unconfirmed messages and re-subscribing consumers.
public final class AMQPConnection: Sendable {
    struct Shared {
        var started = false
        var connected = false
        var finished = false
        var connectWaiters: [UInt64: CheckedContinuation<Result<Void, AMQPError>, Never>] = [:]
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var nextID: UInt64 = 1
    }

    let configuration: AMQPConfiguration
    let topology: AMQPTopology
    let logger: Logger
    let mailbox = Mailbox()
    let shared = Mutex(Shared())
    let connectedFlag = Atomic<Bool>(false)
    let blockedFlag = Atomic<Bool>(false)
    let nextConsumerID = Atomic<UInt64>(1)

    public init(configuration: AMQPConfiguration, topology: AMQPTopology = .init(), logger: Logger) {
        self.configuration = configuration
        self.topology = topology
        var logger = logger
        logger[metadataKey: "amqp.connection"] = "\(configuration.connectionName)"
        self.logger = logger
    }

    deinit {
        // Not closed: tell the thread to stop; it only holds the mailbox and driver, not self.
        _ = mailbox.post(.close)
    }

    /// Starts the connection thread. It connects in the background and keeps retrying with
    /// backoff until `close()`. Calling it again does nothing.
    public func start() {
        let shouldStart = shared.withLock { shared -> Bool in
            guard !shared.started else { return false }
            shared.started = true
            return true
        }
        guard shouldStart else { return }
        let driver = ConnectionDriver(configuration: configuration, topology: topology, logger: logger,
                                      mailbox: mailbox, events: self.makeEvents())
        let thread = Thread { driver.run() }
        thread.name = "amqp-\(configuration.connectionName)"
        thread.start()
    }

    /// True while connected and set up (channels open, topology declared). Cheap, thread-safe.
    public var isConnected: Bool { connectedFlag.load(ordering: .acquiring) }

    /// True while the broker has blocked this connection's publishes (`connection.blocked`: a
    /// memory or disk alarm). Cheap, thread-safe.
    public var isBlocked: Bool { blockedFlag.load(ordering: .acquiring) }

    /// Connected and not blocked: a publish now goes out without waiting for the broker to recover.
    public var acceptsPublishes: Bool { isConnected && !isBlocked }

    /// Waits until the connection is up; throws `.timeout` or `.closed`.
    public func waitUntilConnected(timeout: Duration) async throws(AMQPError) {
        if isConnected { return }
        let id = shared.withLock { shared -> UInt64 in
            defer { shared.nextID += 1 }
            return shared.nextID
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) in
            let immediate = shared.withLock { shared -> Result<Void, AMQPError>? in
                if shared.connected { return .success(()) }
                if shared.finished { return .failure(.closed) }
                shared.connectWaiters[id] = continuation
                return nil
            }
            if let immediate {
                continuation.resume(returning: immediate)
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                let waiter = self?.shared.withLock { $0.connectWaiters.removeValue(forKey: id) }
                waiter?.resume(returning: .failure(.timeout))
            }
        }
        try result.get()
    }

    /// Subscribes to `queue` with a per-consumer prefetch; manual acks.
    ///
    /// With `maxBodyBytes`, a message whose content header declares a larger body is never
    /// buffered: its body frames are read and dropped as they arrive, and it is delivered
    /// with an empty body and `isOversize` set (`bodySize` says how large it was), to be
    /// settled like any other delivery.
    public func consume(queue: String, prefetch: UInt16, maxBodyBytes: Int? = nil) -> AMQPConsumer<AMQPDelivery> {
        consume(queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes) { .deliver($0) }
    }

    /// Subscribes like ``consume(queue:prefetch:maxBodyBytes:)``, with every delivery first
    /// passed to `screen` on the connection thread as it is read. The screen either hands the
    /// sequence what it made of the delivery (decoded once, there) or settles the delivery on
    /// the spot with a move (a copy published, the original acked on its confirm): a flood of
    /// messages that a consumer only moves (malformed ones, to a dead-letter exchange) then
    /// costs no thread hand-off and no wake of the consuming task. `screen` must be quick and
    /// must not block: it holds up this connection's I/O while it runs.
    public func consume<Element: Sendable>(queue: String, prefetch: UInt16, maxBodyBytes: Int? = nil,
                                           screen: @escaping @Sendable (AMQPDelivery) -> AMQPScreening<Element>) -> AMQPConsumer<Element> {
        let id = nextConsumerID.add(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
        let mailbox = self.mailbox
        continuation.onTermination = { termination in
            if case .cancelled = termination {
                _ = mailbox.post(.cancelConsumer(id: id, done: nil))
            }
        }
        let registration = ConsumerRegistration(id: id, queue: queue, prefetch: prefetch, maxBodyBytes: maxBodyBytes,
                                                sink: ConsumerSink(continuation, screen: screen))
        if mailbox.post(.consume(registration)) != nil {
            continuation.finish()
        }
        return AMQPConsumer(id: id, queue: queue, stream: stream, mailbox: mailbox)
    }

    /// Cancels consumers, fails waiting publishes and admin calls with `.closed`, closes the
    /// connection and joins the thread. Idempotent.
    public func close() async {
        let runWithoutThread = shared.withLock { shared -> Bool in
            if !shared.started {
                shared.started = true
                return true
            }
            return false
        }
        if runWithoutThread {
            // Never started: nobody drains the mailbox, so do it here.
            for command in mailbox.closeAndDrain() { ConnectionDriver.fail(command, with: .closed) }
            finish()
            return
        }
        _ = mailbox.post(.close)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = shared.withLock { shared -> Bool in
                if shared.finished { return true }
                shared.closeWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: - Events from the connection thread

    func makeEvents() -> ConnectionEvents {
        let shared = UnsafeShared(connection: self)
        return ConnectionEvents(
            connected: { shared.connection?.setConnected(true) },
            disconnected: { shared.connection?.setConnected(false) },
            finished: { shared.connection?.finish() },
            blocked: { shared.connection?.blockedFlag.store($0, ordering: .releasing) }
        )
    }

    func setConnected(_ connected: Bool) {
        let waiters = shared.withLock { shared -> [CheckedContinuation<Result<Void, AMQPError>, Never>] in
            shared.connected = connected
            connectedFlag.store(connected, ordering: .releasing)
            // A new connection starts unblocked (the broker says blocked again if it still is).
            if !connected { blockedFlag.store(false, ordering: .releasing) }
            guard connected else { return [] }
            defer { shared.connectWaiters = [:] }
            return Array(shared.connectWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: .success(())) }
    }

    func finish() {
        let (connectWaiters, closeWaiters) = shared.withLock { shared in
            shared.connected = false
            shared.finished = true
            connectedFlag.store(false, ordering: .releasing)
            defer {
                shared.connectWaiters = [:]
                shared.closeWaiters = []
            }
            return (Array(shared.connectWaiters.values), shared.closeWaiters)
        }
        for waiter in connectWaiters { waiter.resume(returning: .failure(.closed)) }
        for waiter in closeWaiters { waiter.resume() }
    }
}

/// Callbacks from the connection thread to the `AMQPConnection` (weakly held, so an
/// abandoned connection can be deinitialised and stop its thread).
struct ConnectionEvents: Sendable {
    var connected: @Sendable () -> Void
    var disconnected: @Sendable () -> Void
    var finished: @Sendable () -> Void
    /// connection.blocked (true) and connection.unblocked (false).
    var blocked: @Sendable (Bool) -> Void
}

final class UnsafeShared: Sendable {
    weak let connection: AMQPConnection?
    init(connection: AMQPConnection) { self.connection = connection }
}
