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
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// The loopback address and port the pool connects to: an address of 127.0.0.0/8 of its own,
    /// so a server certificate that names 127.0.0.1 (the usual local one) cannot pass for the
    /// hosts' name (TLS checks IP entries against the address connected to).
    public let address: String
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
        self.address = "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254)).\(UInt8.random(in: 2...254))"
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(self.address)
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

    /// Connects `inbound` to the primary. Recorded under its host only while that host is still
    /// the primary (checked under the lock ``adopt(_:)`` takes): a connection made to a host that
    /// stopped being the primary meanwhile is closed, and the pool connects again.
    private func splice(_ inbound: Channel) async {
        guard let node = await primary(), inbound.isActive else {
            try? await inbound.close()
            return
        }
        var outbound: Channel?
        let key = ObjectIdentifier(inbound)
        do {
            let connected = try await ClientBootstrap(group: inbound.eventLoop)  // one loop for both sides: the Splice handlers share it
                .connectTimeout(.seconds(Int64(configuration.connectTimeoutSeconds)))
                .channelOption(.autoRead, value: false)
                .connect(host: node.host, port: node.port).get()
            outbound = connected
            let current = state.withLock { state in
                guard state.primary == node else { return false }
                state.open[node, default: [:]][key] = (inbound, connected)
                return true
            }
            guard current else { throw ChannelError.ioOnClosedChannel }
            let forget: @Sendable () -> Void = { [self] in state.withLock { _ = $0.open[node]?.removeValue(forKey: key) } }
            try await inbound.eventLoop.submit {
                guard inbound.isActive, connected.isActive else { throw ChannelError.ioOnClosedChannel }
                try inbound.pipeline.syncOperations.addHandler(RelaySplice(partner: connected, onClose: forget))
                try connected.pipeline.syncOperations.addHandler(RelaySplice(partner: inbound, onClose: forget))
                inbound.read()
                connected.read()
            }.get()
        } catch {
            state.withLock { _ = $0.open[node]?.removeValue(forKey: key) }
            try? await outbound?.close()
            try? await inbound.close()
            if outbound == nil {
                logger.warning("database relay: cannot reach the primary", metadata: ["host": "\(node)", "error": "\(String(reflecting: type(of: error)))"])
            }
        }
    }

    /// Asks the primary every 500 ms whether it still is; when not (or unreachable), asks every
    /// host in turn. A change closes the connections to the other hosts.
    private func watch() async {
        var current: (node: Node, connection: PostgresConnection)?
        var id = 0
        while true {
            if let (node, connection) = current, await Self.isPrimary(connection) != true {
                await Self.closeBounded(connection)
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
                    await Self.closeBounded(connection)
                }
                adopt(current?.node)
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    private func adopt(_ primary: Node?) {
        let stale: [(Channel, Channel)]? = state.withLock { state in
            guard state.primary != primary else { return nil }
            state.primary = primary
            let others = state.open.filter { $0.key != primary }
            state.open = state.open.filter { $0.key == primary }
            return others.values.flatMap(\.values)
        }
        guard let stale else { return }
        if let primary {
            logger.info("database relay: primary", metadata: ["host": "\(primary)", "closed": "\(stale.count)"])
        } else {
            logger.warning("database relay: no host is a primary; new connections wait for one", metadata: ["hosts": "\(nodes.map(\.description).joined(separator: ","))"])
        }
        for (inbound, outbound) in stale {
            inbound.close(promise: nil)
            outbound.close(promise: nil)
        }
    }

    /// Bounded: closing a connection whose server died can hang (as ``WorkerPresence`` does it).
    private static func closeBounded(_ connection: PostgresConnection) async {
        _ = try? await Task { try await withDeadline(.seconds(2)) { try await connection.close() } }.value
    }

    private static func isPrimary(_ connection: PostgresConnection) async -> Bool? {
        do {
            let row = try await withDeadline(.seconds(2)) { try await InRecovery().first(on: connection, logger: Logger(label: "herald.database.relay")) }
            return row.map { !$0.inRecovery }
        } catch {
            return nil
        }
    }

    /// Checked against the name the pool's connections check too (the first host's), so one certificate passes both.
    private func connectionConfiguration(_ node: Node) throws -> PostgresConnection.Configuration {
        try Database.connection(configuration, host: node.host, port: node.port, tlsServerName: nodes[0].host)
    }
}
