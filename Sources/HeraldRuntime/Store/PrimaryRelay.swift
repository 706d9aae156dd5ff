import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// `database.url` with several hosts (`postgres://user@db-1:5432,db-2:5432/herald`): the
/// process's connections go to the one that is not in recovery, as libpq's
/// `target_session_attrs=read-write` chooses. PostgresNIO's pool takes one host, so the pool
/// (and the presence lock's connection) connect to this relay on loopback, and each connection
/// the relay accepts is spliced, byte for byte (TLS and all), to the current primary.
///
/// The primary is found by asking each host `SELECT pg_is_in_recovery()` in the order given,
/// and asked again every 500 ms on one connection of the relay's own. When it changes (a
/// standby promoted, the old primary back as a standby), every relayed connection to another
/// host is closed, so the pool reconnects, to the new primary. While no host is the primary, a
/// new connection waits for one up to `database.connect_timeout_seconds`, then is closed: to
/// the worker that is a database that is down, and its jobs are held until it is back.
public final class PrimaryRelay: Sendable {
    public struct Node: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var description: String { "\(host):\(port)" }
    }

    /// The loopback port the pool connects to.
    public let port: Int
    let nodes: [Node]
    private let configuration: DatabaseConfiguration
    private let logger: Logger
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let state = Mutex(State())

    private struct State {
        var primary: Node?
        /// Relayed connections by the host they reach (both channels of each).
        var open: [Node: [ObjectIdentifier: (Channel, Channel)]] = [:]
    }

    /// One relay per distinct `database.url` in a process (the pool and the presence lock share it).
    static func shared(_ configuration: DatabaseConfiguration, nodes: [Node], logger: Logger) throws -> PrimaryRelay {
        try relays.withLock { relays in
            if let relay = relays[configuration.url] { return relay }
            let relay = try PrimaryRelay(configuration, nodes: nodes, logger: logger)
            relays[configuration.url] = relay
            return relay
        }
    }

    private static let relays = Mutex<[String: PrimaryRelay]>([:])

    private init(_ configuration: DatabaseConfiguration, nodes: [Node], logger: Logger) throws {
        self.configuration = configuration
        self.nodes = nodes
        self.logger = logger
        // Bound and listening before the pool's first connect (no wait on an event loop here:
        // the executables run their tasks on NIO's threads); NIO accepts from it once registered.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard listener >= 0, bound, listen(listener, 128) == 0 else {
            if listener >= 0 { close(listener) }
            throw ConfigError(key: "database.url", reason: "cannot open the loopback relay to its hosts")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        _ = ServerBootstrap(group: group)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { [self] inbound in
                Task { await self.splice(inbound) }
                return inbound.eventLoop.makeSucceededVoidFuture()
            }
            .withBoundSocket(listener)
        Task { await watch() }
    }

    /// The host that is the primary now, waiting up to the connect timeout for one.
    private func primary() async -> Node? {
        let deadline = ContinuousClock.now + .seconds(configuration.connectTimeoutSeconds)
        while true {
            if let primary = state.withLock({ $0.primary }) { return primary }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    private func splice(_ inbound: Channel) async {
        guard let node = await primary() else {
            try? await inbound.close()
            return
        }
        do {
            let outbound = try await ClientBootstrap(group: inbound.eventLoop)
                .connectTimeout(.seconds(Int64(configuration.connectTimeoutSeconds)))
                .channelOption(.autoRead, value: false)
                .connect(host: node.host, port: node.port).get()
            let key = ObjectIdentifier(inbound)
            state.withLock { $0.open[node, default: [:]][key] = (inbound, outbound) }
            let forget: @Sendable () -> Void = { [self] in state.withLock { _ = $0.open[node]?.removeValue(forKey: key) } }
            try await inbound.eventLoop.submit {
                try inbound.pipeline.syncOperations.addHandler(Splice(partner: outbound, onClose: forget))
                try outbound.pipeline.syncOperations.addHandler(Splice(partner: inbound, onClose: forget))
                inbound.read()
                outbound.read()
            }.get()
        } catch {
            logger.warning("database relay: cannot reach the primary", metadata: ["host": "\(node)", "error": "\(String(reflecting: type(of: error)))"])
            try? await inbound.close()
        }
    }

    /// Asks the primary every 500 ms whether it still is; when not (or unreachable), asks every
    /// host in turn. A change closes the connections to the other hosts.
    private func watch() async {
        var current: (node: Node, connection: PostgresConnection)?
        var id = 0
        while true {
            if let (node, connection) = current, await Self.isPrimary(connection) != true {
                try? await connection.close()
                current = nil
                logger.warning("database relay: the primary is no longer one; looking for the new primary", metadata: ["host": "\(node)"])
            }
            if current == nil {
                for node in nodes {
                    id += 1
                    guard let connection = try? await PostgresConnection.connect(configuration: connectionConfiguration(node), id: id, logger: logger) else { continue }
                    if await Self.isPrimary(connection) == true {
                        current = (node, connection)
                        break
                    }
                    try? await connection.close()
                }
                adopt(current?.node)
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    private func adopt(_ primary: Node?) {
        let stale: [(Channel, Channel)] = state.withLock { state in
            guard state.primary != primary else { return [] }
            state.primary = primary
            let others = state.open.filter { $0.key != primary }
            state.open = state.open.filter { $0.key == primary }
            return others.values.flatMap(\.values)
        }
        if let primary { logger.info("database relay: primary", metadata: ["host": "\(primary)", "closed": "\(stale.count)"]) }
        for (inbound, outbound) in stale {
            inbound.close(promise: nil)
            outbound.close(promise: nil)
        }
    }

    private static func isPrimary(_ connection: PostgresConnection) async -> Bool? {
        do {
            let rows = try await withDeadline(.seconds(2)) { try await connection.query("SELECT pg_is_in_recovery()", logger: Logger(label: "herald.database.relay")).collect() }
            return try rows.first.map { try !$0.decode(Bool.self) }
        } catch {
            return nil
        }
    }

    private func connectionConfiguration(_ node: Node) throws -> PostgresConnection.Configuration {
        let endpoint = try configuration.endpoint()
        var config = PostgresConnection.Configuration(host: node.host, port: node.port, username: endpoint.user, password: endpoint.password,
                                                      database: endpoint.database, tls: try WorkerPresence.tls(configuration))
        config.options.connectTimeout = .seconds(Int64(configuration.connectTimeoutSeconds))
        return config
    }
}

/// One side of a relayed connection: what it reads is written to its partner (read again once
/// written, so a slow side holds the other back); either side closing closes both.
private final class Splice: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    let partner: Channel
    let onClose: @Sendable () -> Void

    init(partner: Channel, onClose: @escaping @Sendable () -> Void) {
        self.partner = partner
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let channel = context.channel
        partner.writeAndFlush(bytes).whenComplete { result in
            if case .success = result { channel.read() } else { channel.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose()
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
