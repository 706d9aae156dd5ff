import CRabbitMQ
import Foundation
import Logging

/// The connection thread: owns the `amqp_connection_state_t` and every piece of state that
/// goes with it. Nothing here is touched from any other thread (hence `@unchecked Sendable`:
/// the instance is only handed to `Thread` once).
///
/// Channels: 1 consumes and acks, 2 publishes in confirm mode, 3 runs admin operations.
/// The loop: take mailbox commands → send (publishes within the confirm window, acks in a
/// batch, the next RPC step per channel) → read every frame already available → if nothing
/// happened, `poll()` the socket and the wake-up eventfd (at most heartbeat/4, so heartbeats
/// go out and missed ones are noticed).
final class ConnectionDriver: @unchecked Sendable {
    static let consumeChannel: UInt16 = 1
    static let publishChannel: UInt16 = 2
    static let adminChannel: UInt16 = 3
    static let frameMax: Int32 = 131_072
    /// Frames read per loop turn before sending again.
    static let readBatch = 512
    /// Publishes written per loop turn before reading again.
    static let publishBatch = 256

    enum ChannelState { case closed, opening, confirming, open }

    /// A synchronous request sent on a channel whose reply we wait for (one per channel).
    enum Awaiting {
        case channelOpen
        case confirmSelect
        case admin
        case qos(consumer: UInt64)
        case consume(consumer: UInt64)
        case cancel(consumer: UInt64)
    }

    let configuration: AMQPConfiguration
    let topology: AMQPTopology
    var logger: Logger
    let mailbox: Mailbox
    let events: ConnectionEvents
    let arena = CArena()

    // Connection
    var conn: amqp_connection_state_t?
    var sockfd: Int32 = -1
    var closing = false
    var retryAt: ContinuousClock.Instant = .now
    var backoff: Duration
    var failuresSinceConnected = 0
    /// The broker's nodes in this connection's order (shuffled, so a fleet spreads over them),
    /// and the one in use or tried next.
    let nodes: [AMQPURL]
    var node = 0
    /// Nodes tried at once, without the backoff, since the last wait (or a connection that lasted).
    var quickTries = 0
    var connectedAt: ContinuousClock.Instant?
    var generationCounter: UInt64 = 0
    var channelState: [UInt16: ChannelState] = [:]
    var channelGeneration: [UInt16: UInt64] = [:]
    var awaiting: [UInt16: Awaiting] = [:]
    var content: [UInt16: ContentAssembly] = [:]

    // Publishing (channel 2)
    var outbox = FIFO<PublishEntry>()
    var inflight: [PublishEntry] = []
    var nextPublishSeq: UInt64 = 1

    // Admin (channel 3)
    var adminQueue = FIFO<AdminEntry>()
    var adminCurrent: AdminEntry?
    var topologyReady = false
    var outstandingGets: Set<UInt64> = []

    // Consumers (channel 1)
    var consumers: [UInt64: ConsumerEntry] = [:]
    var consumersByTag: [String: ConsumerEntry] = [:]
    var consumerWork = FIFO<UInt64>()
    /// Delivery tags handed out on channel 1 and not settled yet, ascending.
    var outstandingDeliveries: [UInt64] = []

    // Settles collected during one mailbox drain
    var pendingSettles: [SettleRequest] = []

    init(configuration: AMQPConfiguration, topology: AMQPTopology, logger: Logger, mailbox: Mailbox,
         events: ConnectionEvents) {
        self.configuration = configuration
        self.topology = topology
        self.logger = logger
        self.mailbox = mailbox
        self.events = events
        self.backoff = configuration.reconnectInitialDelay
        precondition(!configuration.urls.isEmpty, "AMQPConfiguration.urls names no node")
        self.nodes = configuration.shuffleNodes ? configuration.urls.shuffled() : configuration.urls
    }

    var isUp: Bool { conn != nil }

    // MARK: - Loop

    func run() {
        logger.debug("AMQP connection thread started", metadata: ["amqp.url": "\(nodes[node])"])
        while true {
            handle(mailbox.take())
            if closing { break }

            guard isUp else {
                _ = flushSettles()  // nothing to ack on: stale at once
                let now = ContinuousClock.now
                if now >= retryAt {
                    connect()
                } else {
                    sleep(until: retryAt)
                }
                continue
            }

            var didWork = flushSettles()
            if isUp { didWork = pump() || didWork }
            var drained = true
            if isUp {
                let (read, allRead) = readFrames()
                didWork = didWork || read
                drained = allRead
            }
            if !isUp || didWork || !drained || hasSendableWork { continue }
            idleWait()
        }
        shutdown()
    }

    /// Blocks in poll() on the socket and the wake-up fd.
    private func idleWait() {
        guard mailbox.prepareToSleep() else { return }
        var timeoutMS: Int32 = 1000
        if configuration.heartbeat > 0 { timeoutMS = Int32(max(50, configuration.heartbeat * 250)) }
        if nodes[node].useTLS { timeoutMS = min(timeoutMS, 50) }
        let ready = herald_poll2(sockfd, mailbox.wakeFD, timeoutMS)
        mailbox.awake()
        if ready > 0 && ready & 2 != 0 { herald_eventfd_drain(mailbox.wakeFD) }
    }

    /// Waits for the reconnect time (or a command).
    private func sleep(until deadline: ContinuousClock.Instant) {
        guard mailbox.prepareToSleep() else { return }
        let left = ContinuousClock.now.duration(to: deadline)
        let ms = max(1, Int32(min(60_000, left.milliseconds)))
        let ready = herald_poll2(-1, mailbox.wakeFD, ms)
        mailbox.awake()
        if ready > 0 && ready & 2 != 0 { herald_eventfd_drain(mailbox.wakeFD) }
    }

    private func handle(_ commands: [Command]) {
        for command in commands {
            switch command {
            case .publish(let request):
                guard outbox.count < configuration.maxQueuedPublishes else {
                    request.continuation.resume(returning: .failure(.overloaded))
                    continue
                }
                outbox.append(PublishEntry(request))
            case .admin(let request):
                adminQueue.append(AdminEntry(steps: request.steps, continuation: request.continuation))
            case .settle(let request):
                pendingSettles.append(request)
            case .consume(let registration):
                addConsumer(registration)
            case .cancelConsumer(let id, let done):
                requestCancel(id, done: done)
            case .close:
                closing = true
            }
        }
    }

    /// Sends whatever each channel can send now. Returns true if anything was sent.
    private func pump() -> Bool {
        var didWork = false
        for channel in [Self.consumeChannel, Self.publishChannel, Self.adminChannel] {
            guard isUp else { return didWork }
            if channelState[channel] == .closed && awaiting[channel] == nil {
                didWork = true
                sendChannelOpen(channel)
            }
        }
        guard isUp else { return didWork }
        if awaiting[Self.adminChannel] == nil && channelState[Self.adminChannel] == .open {
            didWork = startNextAdminStep() || didWork
        }
        guard isUp, topologyReady else { return didWork }
        if awaiting[Self.consumeChannel] == nil && channelState[Self.consumeChannel] == .open {
            didWork = startNextConsumerOp() || didWork
        }
        guard isUp else { return didWork }
        if channelState[Self.publishChannel] == .open {
            didWork = publishPending() || didWork
        }
        return didWork
    }

    private var hasSendableWork: Bool {
        topologyReady && channelState[Self.publishChannel] == .open && !outbox.isEmpty
            && inflight.count < max(1, configuration.confirmWindow)
    }

    // MARK: - Connecting

    private func connect() {
        let url = nodes[node]
        guard let state = amqp_new_connection() else {
            connectFailed("out of memory")
            return
        }
        conn = state
        let socket: OpaquePointer?
        if url.useTLS {
            socket = amqp_ssl_socket_new(state)
            if let socket {
                let tls = configuration.tls
                if let ca = tls.caCertificatePath {
                    let rc = amqp_ssl_socket_set_cacert(socket, ca)
                    if rc != AMQP_STATUS_OK.rawValue {
                        connectFailed("cannot load CA certificate \(ca): \(Self.statusText(rc))")
                        return
                    }
                }
                amqp_ssl_socket_set_verify_peer(socket, tls.verifyPeer ? 1 : 0)
                amqp_ssl_socket_set_verify_hostname(socket, tls.verifyHostname ? 1 : 0)
                if let cert = tls.clientCertificatePath, let key = tls.clientKeyPath {
                    let rc = amqp_ssl_socket_set_key(socket, cert, key)
                    if rc != AMQP_STATUS_OK.rawValue {
                        connectFailed("cannot load client certificate/key: \(Self.statusText(rc))")
                        return
                    }
                }
            }
        } else {
            socket = amqp_tcp_socket_new(state)
        }
        guard let socket else {
            connectFailed("cannot create socket")
            return
        }
        var timeout = Self.makeTimeval(configuration.connectTimeout)
        let rc = amqp_socket_open_noblock(socket, url.host, Int32(url.port), &timeout)
        guard rc == AMQP_STATUS_OK.rawValue else {
            connectFailed("cannot open \(url.useTLS ? "TLS " : "")connection to \(url.host):\(url.port): \(Self.statusText(rc))")
            return
        }
        amqp_set_handshake_timeout(state, &timeout)
        amqp_set_rpc_timeout(state, &timeout)

        var properties = clientProperties()
        let login = herald_amqp_login_plain(state, url.vhost, 0, Self.frameMax, Int32(configuration.heartbeat),
                                            &properties, url.user, url.password)
        arena.reset()
        if let error = Self.describe(login) {
            connectFailed("login to \(url.host):\(url.port) vhost '\(url.vhost)' as '\(url.user)' failed: \(error)")
            return
        }
        for channel in [Self.consumeChannel, Self.publishChannel, Self.adminChannel] {
            _ = amqp_channel_open(state, channel)
            if let error = Self.describe(amqp_get_rpc_reply(state)) {
                connectFailed("cannot open channel \(channel): \(error)")
                return
            }
            openedChannel(channel)
        }
        _ = amqp_confirm_select(state, Self.publishChannel)
        if let error = Self.describe(amqp_get_rpc_reply(state)) {
            connectFailed("cannot enable publisher confirms: \(error)")
            return
        }
        sockfd = amqp_get_sockfd(state)
        nextPublishSeq = 1
        topologyReady = topology.isEmpty
        if !topology.isEmpty {
            adminQueue.prepend(contentsOf: [AdminEntry(steps: AMQPConnection.steps(for: topology), continuation: nil)])
        }
        backoff = configuration.reconnectInitialDelay
        connectedAt = .now
        if failuresSinceConnected > 0 {
            logger.info("AMQP connection re-established", metadata: ["amqp.url": "\(url)"])
        } else {
            logger.debug("AMQP connected", metadata: ["amqp.url": "\(url)"])
        }
        failuresSinceConnected = 0
        if topologyReady { events.connected() }
    }

    private func openedChannel(_ channel: UInt16) {
        generationCounter += 1
        channelGeneration[channel] = generationCounter
        channelState[channel] = .open
    }

    private func clientProperties() -> amqp_table_t {
        let capabilities: AMQPTable = [
            "consumer_cancel_notify": .bool(true),
            "publisher_confirms": .bool(true),
            "basic.nack": .bool(true),
            "connection.blocked": .bool(true),
            "authentication_failure_close": .bool(true),
        ]
        let table: AMQPTable = [
            "connection_name": .string(configuration.connectionName),
            "product": .string("Herald AMQP (rabbitmq-c)"),
            "capabilities": .table(capabilities),
        ]
        return AMQPFieldValue.cTable(table, in: arena)
    }

    private func connectFailed(_ reason: String) {
        arena.reset()
        if failuresSinceConnected == 0 {
            logger.warning("AMQP connect failed; retrying with backoff", metadata: ["reason": "\(reason)"])
        } else {
            logger.debug("AMQP connect failed", metadata: ["reason": "\(reason)"])
        }
        failuresSinceConnected += 1
        teardown()
    }

    /// The connection is broken (socket error, heartbeat timeout, connection.close from the
    /// broker): log once, forget it and reconnect later. Nothing that can be retried fails.
    func connectionLost(_ reason: String) {
        if failuresSinceConnected == 0 {
            logger.warning("AMQP connection lost; reconnecting", metadata: ["reason": "\(reason)"])
        }
        failuresSinceConnected += 1
        teardown()
    }

    /// Drops the connection state and schedules the reconnect; keeps everything retryable.
    private func teardown() {
        let wasUp = topologyReady
        if let conn {
            amqp_destroy_connection(conn)
        }
        conn = nil
        sockfd = -1
        arena.reset()
        channelState = [:]
        awaiting = [:]
        content = [:]
        // Deliveries from this connection are now stale.
        generationCounter += 1
        channelGeneration = [:]
        outstandingDeliveries = []
        outstandingGets = []
        topologyReady = false
        requeueUnconfirmedPublishes()
        requeueAdminAfterLoss()
        consumersLost()
        if wasUp { events.disconnected() }
        // The next node at once, until each was tried; then the backoff. A connection that lasted
        // 10 s starts a new round; nodes that accept and drop at once still meet the backoff.
        node = (node + 1) % nodes.count
        if let connectedAt, ContinuousClock.now - connectedAt > .seconds(10) { quickTries = 0 }
        connectedAt = nil
        if quickTries < nodes.count - 1 {
            quickTries += 1
            retryAt = .now
            return
        }
        quickTries = 0
        retryAt = .now + backoff
        backoff = min(backoff * 2, configuration.reconnectMaxDelay)
    }

    // MARK: - Shutdown

    private func shutdown() {
        let late = mailbox.closeAndDrain()
        for command in late {
            if case .settle(let request) = command { pendingSettles.append(request) } else { Self.fail(command, with: .closed) }
        }
        for settle in pendingSettles { settle.continuation.resume(returning: .failure(.closed)) }
        pendingSettles = []
        for entry in inflight { entry.continuation.resume(returning: .failure(.closed)) }
        inflight = []
        for entry in outbox.removeAll() { entry.continuation.resume(returning: .failure(.closed)) }
        if let current = adminCurrent { current.continuation?.resume(returning: .failure(.closed)) }
        adminCurrent = nil
        for entry in adminQueue.removeAll() { entry.continuation?.resume(returning: .failure(.closed)) }
        for consumer in consumers.values {
            consumer.sink.finish()
            for waiter in consumer.cancelWaiters { waiter.resume() }
        }
        consumers = [:]
        consumersByTag = [:]
        if let conn {
            var timeout = Self.makeTimeval(.seconds(2))
            amqp_set_rpc_timeout(conn, &timeout)
            _ = amqp_connection_close(conn, 200)
            amqp_destroy_connection(conn)
            self.conn = nil
        }
        logger.debug("AMQP connection closed")
        events.finished()
    }

    /// Fails a command that never reached a live connection thread.
    static func fail(_ command: Command, with error: AMQPError) {
        switch command {
        case .publish(let request): request.continuation.resume(returning: .failure(error))
        case .admin(let request): request.continuation.resume(returning: .failure(error))
        case .settle(let request): request.continuation.resume(returning: .failure(error))
        case .consume(let registration): registration.sink.finish()
        case .cancelConsumer(_, let done): done?.resume()
        case .close: break
        }
    }

    // MARK: - Sending helpers

    /// Sends a method; on failure the connection is treated as lost. Returns success.
    @discardableResult
    func send<T>(_ channel: UInt16, _ method: amqp_method_number_t, _ body: T) -> Bool {
        guard let conn else { return false }
        var body = body
        let rc = withUnsafeMutablePointer(to: &body) { amqp_send_method(conn, channel, method, $0) }
        arena.reset()
        if rc != AMQP_STATUS_OK.rawValue {
            connectionLost("send failed: \(Self.statusText(rc))")
            return false
        }
        return true
    }

    func sendChannelOpen(_ channel: UInt16) {
        channelState[channel] = .opening
        awaiting[channel] = .channelOpen
        send(channel, HERALD_CHANNEL_OPEN, amqp_channel_open_t(out_of_band: herald_empty_bytes()))
    }

    /// A channel.open-ok or confirm.select-ok arrived.
    func channelReopened(_ channel: UInt16, afterConfirmSelect: Bool) {
        if channel == Self.publishChannel && !afterConfirmSelect {
            channelState[channel] = .confirming
            awaiting[channel] = .confirmSelect
            send(channel, HERALD_CONFIRM_SELECT, amqp_confirm_select_t(nowait: 0))
            return
        }
        openedChannel(channel)
        if channel == Self.publishChannel { nextPublishSeq = 1 }
        logger.debug("AMQP channel reopened", metadata: ["channel": "\(channel)"])
    }

    // MARK: - Utilities

    static func makeTimeval(_ duration: Duration) -> timeval {
        let (seconds, attoseconds) = duration.components
        return timeval(tv_sec: Int(max(0, seconds)), tv_usec: Int(max(0, attoseconds) / 1_000_000_000_000))
    }

    static func statusText(_ status: Int32) -> String {
        String(cString: amqp_error_string2(status))
    }

    /// nil for a normal reply, else a text (never with credentials).
    static func describe(_ reply: amqp_rpc_reply_t) -> String? {
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            return nil
        case AMQP_RESPONSE_NONE:
            return "no reply"
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            return statusText(reply.library_error)
        case AMQP_RESPONSE_SERVER_EXCEPTION:
            if reply.reply.id == HERALD_CONNECTION_CLOSE, let decoded = reply.reply.decoded {
                let close = decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                return "server closed the connection: \(close.reply_code) \(close.reply_text.string)"
            }
            if reply.reply.id == HERALD_CHANNEL_CLOSE, let decoded = reply.reply.decoded {
                let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                return "server closed the channel: \(close.reply_code) \(close.reply_text.string)"
            }
            return "unexpected server reply \(reply.reply.id)"
        default:
            return "unknown reply"
        }
    }
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
