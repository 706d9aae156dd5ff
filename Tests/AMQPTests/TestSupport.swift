import AMQP
import Foundation
import Logging
import Synchronization
import Testing

/// Where the test broker is and how to reach the project's scripts.
enum TestEnvironment {
    static let environment = ProcessInfo.processInfo.environment

    static var amqpURL: String {
        environment["HERALD_AMQP_URL"] ?? "amqp://guest:guest@127.0.0.1:55672/%2f"
    }

    /// The repository root (holds scripts/services.sh), found from this file's real path.
    static var repositoryRoot: URL {
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("scripts/services.sh").path) {
                return url
            }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: "/work/main")
    }

    static var runDirectory: URL {
        if let dir = environment["HERALD_RUN_DIR"] { return URL(fileURLWithPath: dir) }
        return repositoryRoot.appendingPathComponent(".run")
    }

    static var tlsCAPath: String {
        environment["HERALD_DEV_AMQP_TLS_CA"] ?? runDirectory.appendingPathComponent("rabbitmq/tls/ca.pem").path
    }

    /// amqps URL of the same broker (TLS listener one port below the plain one by default).
    static var amqpsURL: String {
        if let url = environment["HERALD_DEV_AMQP_TLS_URL"] { return url }
        let plain = try! AMQPURL(amqpURL)
        return "amqps://\(plain.user):\(plain.password)@localhost:\(plain.port - 1)/%2f"
    }

    static let logger: Logger = {
        var logger = Logger(label: "amqp-tests") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = environment["HERALD_TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        return logger
    }()

    /// A unique name for queues, exchanges and connections of one test.
    static func unique(_ base: String) -> String {
        "amqp-test.\(base).\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Runs scripts/services.sh with arguments on a plain thread (it can take seconds);
    /// returns its standard output, throws when it fails. (Foundation.Process's
    /// waitUntilExit sometimes never returns on Linux, so this uses system().)
    @discardableResult
    static func services(_ arguments: String...) async throws -> String {
        let script = repositoryRoot.appendingPathComponent("scripts/services.sh").path
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("amqp-test-\(UUID().uuidString).out").path
        let quoted = ([script] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = quoted.joined(separator: " ") + " >'\(output)' 2>/dev/null </dev/null"
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let thread = Thread { continuation.resume(returning: system(command)) }
            thread.start()
        }
        defer { try? FileManager.default.removeItem(atPath: output) }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0 else { throw ServicesError(arguments: arguments, status: status, output: text) }
        return text
    }

    /// Makes the broker close the connections whose connection_name is `name` (and only those).
    static func closeConnections(named names: String...) async throws -> Int {
        let listing = try await services("rabbitmqctl", "-q", "list_connections", "--no-table-headers", "pid", "client_properties")
        var closed = 0
        for line in listing.split(separator: "\n") where names.contains(where: { line.contains($0) }) {
            guard let pid = line.split(separator: "\t").first else { continue }
            try await services("rabbitmqctl", "close_connection", String(pid), "amqp test: forced close")
            closed += 1
        }
        return closed
    }
}

struct ServicesError: Error {
    var arguments: [String]
    var status: Int32
    var output: String
}

/// Opens a started, connected connection; closes it after `body`.
func withConnection<T>(
    name: String = TestEnvironment.unique("conn"),
    url: String = TestEnvironment.amqpURL,
    tls: AMQPTLSConfiguration = AMQPTLSConfiguration(),
    heartbeat: Int = 10,
    topology: AMQPTopology = AMQPTopology(),
    shuffleNodes: Bool = true,
    _ body: (AMQPConnection) async throws -> T
) async throws -> T {
    let nodes = try AMQPURL.list(url)
    var configuration = AMQPConfiguration(
        url: nodes[0], tls: tls, heartbeat: heartbeat,
        reconnectInitialDelay: .milliseconds(100), reconnectMaxDelay: .milliseconds(500),
        connectionName: name)
    configuration.urls = nodes
    configuration.shuffleNodes = shuffleNodes
    let connection = AMQPConnection(configuration: configuration, topology: topology, logger: TestEnvironment.logger)
    connection.start()
    do {
        try await connection.waitUntilConnected(timeout: .seconds(30))
        let result = try await body(connection)
        await connection.close()
        return result
    } catch {
        await connection.close()
        throw error
    }
}

/// Declares a fresh queue (plus extra topology) for one test and deletes it afterwards.
func withQueue<T>(
    _ connection: AMQPConnection,
    _ base: String,
    durable: Bool = false,
    arguments: AMQPTable = [:],
    _ body: (String) async throws -> T
) async throws -> T {
    let name = TestEnvironment.unique(base)
    try await connection.declare(AMQPTopology(queues: [.init(name: name, durable: durable, arguments: arguments)]))
    do {
        let result = try await body(name)
        try? await connection.deleteQueue(name)
        return result
    } catch {
        try? await connection.deleteQueue(name)
        throw error
    }
}

/// Iterates a consumer in a background task and keeps what arrives.
final class Collector: Sendable {
    final class Storage: Sendable {
        let deliveries = Mutex<[AMQPDelivery]>([])
    }
    private let storage = Storage()
    private let task: Task<Void, Never>

    /// `each` runs for every delivery, in order, before the next one is taken.
    init(_ consumer: AMQPConsumer<AMQPDelivery>, each: @Sendable @escaping (AMQPDelivery) async -> Void = { _ in }) {
        let storage = self.storage
        task = Task {
            for await delivery in consumer {
                storage.deliveries.withLock { $0.append(delivery) }
                await each(delivery)
            }
        }
    }

    var deliveries: [AMQPDelivery] { storage.deliveries.withLock { $0 } }
    var count: Int { storage.deliveries.withLock { $0.count } }

    /// Waits until at least `count` deliveries arrived (or the timeout passed); returns the count.
    @discardableResult
    func wait(for count: Int, timeout: Duration) async -> Int {
        let deadline = ContinuousClock.now + timeout
        while self.count < count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return self.count
    }

    /// Waits until the consumer's sequence finishes.
    func finished() async {
        await task.value
    }

    func stop() {
        task.cancel()
    }
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}

/// Suite for everything that talks to the broker. Serialized: one test restarts the broker.
/// Run by `make test` only (`scripts/test.sh` sets `HERALD_TEST_BIN_DIR` and the parallelism
/// bound): a plain `swift test` skips it with the line that says so.
@Suite(.serialized, .enabled(if: TestEnvironment.environment["HERALD_TEST_BIN_DIR"] != nil
                             && TestEnvironment.environment["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"] != nil,
                             "needs `make test`"))
struct BrokerTests {}

/// Runs `body` and returns the AMQPError it threw (nil when it did not throw).
func amqpError(_ body: () async throws(AMQPError) -> Void) async -> AMQPError? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

/// A thread-safe counter tests share between tasks.
final class Counter: Sendable {
    private let atomic = Atomic<Int>(0)
    func increment() { atomic.add(1, ordering: .relaxed) }
    var value: Int { atomic.load(ordering: .relaxed) }
}
