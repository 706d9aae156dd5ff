import AMQP
import Foundation
import HeraldRuntime
import HeraldStubs
import Logging
import PostgresNIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A peer (issue 48): a lean worker doing the bare SMS job (consume, code and its HMAC, INSERT,
/// provider POST, 'sent' UPDATE, ack). The Go peer (bench/peers/go) is built by scripts/bench.sh
/// as `herald-peer-go` beside the release executables; the Swift peer (Sources/herald-peer-swift:
/// the same job on the libraries herald-sms runs on) is a release product, `herald-peer-swift`. One
/// process, `concurrency` jobs in flight, run as the herald-sms process runs are
/// (``smsProcesses(count:processes:controls:pacedRate:statements:variant:configuration:logger:)``):
/// the same broker (a queue of the bench's namespace and queue type), database (the bench
/// database, over the same TLS, the Go peer's table made by its `prepare`) and provider stub (a
/// ``StubHTTPServer`` in herald-bench, answering as Twilio's Messages endpoint), the jobs
/// published by herald-bench from 32 lanes with confirms, the watch stopped when the stub
/// receives each job's SMS, and the CPU of each component from ``CPUMeter`` (the peer's process
/// as the worker).
struct Peer {
    enum Language: String, CaseIterable {
        case go, swift
    }

    var language: Language
    var configuration: HeraldConfiguration
    var logger: Logger

    /// The Go peer's executable: its `prepare` makes the table both peers write.
    static var goExecutable: String { BenchExecutables.path("herald-peer-go") }
    /// The peer's executable; both take `work 0 C` and the same environment (``peerEnvironment(queue:providerURL:)``).
    var executable: String { BenchExecutables.path("herald-peer-" + language.rawValue) }
    /// Jobs in flight of its runs (its pool holds as many connections).
    static let concurrencies = [16, 64]

    /// Every peer's run at each of ``concurrencies``, interleaved (go 16, swift 16, go 64, swift 64):
    /// what PostgreSQL does after the runs before them (autovacuum, a checkpoint) falls on both
    /// languages alike. ``labels`` names them in this order.
    static func runs(count: Int, configuration: HeraldConfiguration, logger: Logger) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        for concurrency in concurrencies {
            for language in Language.allCases {
                results.append(try await Peer(language: language, configuration: configuration, logger: logger).run(count: count, concurrency: concurrency))
            }
        }
        return results
    }

    /// The short names of ``runs(count:configuration:logger:)``'s results, in its order.
    static var labels: [String] { concurrencies.flatMap { concurrency in Language.allCases.map { "\($0) \(concurrency)" } } }

    func run(count: Int, concurrency: Int) async throws -> BenchResult {
        let watch = Stopwatch()
        let expected = ExpectedSMS()
        let provider = try await StubHTTPServer { request in
            if let to = request.form["To"], let id = expected.take(to) { watch.finish(id) }
            return .init(status: 201, body: #"{"sid":"SM00000000000000000000000000000000","status":"queued"}"#)
        }
        let queue = configuration.amqp.namespace + ".peer." + language.rawValue
        let environment = peerEnvironment(queue: queue, providerURL: provider.baseURL + "/2010-04-01/Accounts/AC1/Messages.json")
        _ = try await ChildProcess.run(Self.goExecutable, ["prepare"], environment: environment)
        let connection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "bench-peer"), logger: logger)
        connection.start()
        try await connection.waitUntilConnected(timeout: .seconds(10))
        // `work 0 C`: consumes until stopped (it declares its queue, then consumes).
        let worker = try ChildProcess(executable, ["work", "0", String(concurrency)], environment: environment)
        defer {
            worker.signal(SIGTERM)
            while worker.isRunning { usleep(10_000) }
        }
        let ready = ContinuousClock.now + .seconds(30)
        while (try await connection.queueState(queue)?.consumerCount ?? 0) < 1 {
            guard worker.isRunning else { throw BenchFailure("the \(language) peer exited before consuming: \(worker.output.suffix(500))") }
            guard ContinuousClock.now < ready else { throw BenchFailure("the \(language) peer did not consume within 30 s") }
            try await Task.sleep(for: .milliseconds(100))
        }

        // The numbers of the herald-sms runs: distinct, spread over every prefix.
        let offset = Int.random(in: 0..<1_000_000_000)
        let counter = Counter()
        let properties = AMQPProperties(contentType: "application/json", persistent: true)
        let meter = try CPUMeter.start(workerPIDs: [worker.pid])
        try await publishAll(count: count, watch: watch) { id in
            let n = (counter.next() + offset) % 1_000_000_000
            let phone = "+4917" + String(format: "%09d", (n * 2_654_435_761) % 1_000_000_000)
            expected.expect(phone, id: id)
            let body = try JSONEncoder().encode(PeerJob(ID: UUID().uuidString.lowercased(), Phone: phone, Locale: "en"))
            try await connection.publish(body: Array(body), exchange: "", routingKey: queue, properties: properties)
        }
        let deadline = ContinuousClock.now + .seconds(600)
        while watch.count < count {
            guard ContinuousClock.now < deadline else { throw BenchFailure("\(language) peer: only \(watch.count) of \(count) SMS arrived") }
            guard worker.isRunning else { throw BenchFailure("the \(language) peer exited during the run (\(count - watch.count) SMS missing): \(worker.output.suffix(500))") }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Its last 'sent' UPDATEs and acks follow the last SMS, as herald-sms's outcomes do.
        try await Task.sleep(for: .milliseconds(100))
        var result = watch.result("\(language) peer, 1 process, \(concurrency) in flight")
        result.cpu = try meter.stop()
        result.memory = ProcessMemory.read(worker.pid).map { [$0] } ?? []
        let sent = try await sentCount(atLeast: count)
        guard sent >= count else { throw BenchFailure("\(language) peer: \(sent) of \(count) verifications marked sent") }
        try? await connection.deleteQueue(queue)
        await connection.close()
        await provider.close()
        return result
    }

    /// The peer's environment (bench/peers/go/main.go): the bench's broker, database and queue type, its queue, the stub.
    func peerEnvironment(queue: String, providerURL: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["AMQP_URL"] = configuration.amqp.url
        environment["PG_URL"] = Self.pgxURL(configuration.database)
        environment["PEER_QUEUE"] = queue
        environment["PEER_QUEUE_TYPE"] = configuration.amqp.queueType.rawValue
        environment["PROVIDER_URL"] = providerURL
        return environment
    }

    /// The bench database's URL for pgx, with the TLS that herald-sms uses (`database.tls`):
    /// require verifies the chain and the host name (pgx's verify-full), against `tls_ca_file` when set.
    /// A URL that has a query of its own (`?application_name=…`) gets the mode after it.
    static func pgxURL(_ database: DatabaseConfiguration) -> String {
        let url = database.url + (database.url.contains("?") ? "&" : "?")
        switch database.tls {
        case .disable: return url + "sslmode=disable"
        case .prefer: return url + "sslmode=prefer"
        case .require:
            let ca = database.tlsCAFile.isEmpty ? "" : "&sslrootcert=" + (database.tlsCAFile.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? database.tlsCAFile)
            return url + "sslmode=verify-full" + ca
        }
    }

    /// The verifications the peer marked sent (its UPDATE commits before its ack), waiting up to 5 s for `atLeast`.
    func sentCount(atLeast expected: Int) async throws -> Int {
        var settings = configuration.database
        settings.maxConnections = 1
        let client = try Database.makeClient(settings, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            var sent = 0
            for try await value in try await client.query("SELECT count(*) FROM peer_verifications WHERE status = 'sent'", logger: logger).decode(Int.self) {
                sent = value
            }
            if sent >= expected || ContinuousClock.now > deadline { return sent }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// The peer's job body, as its own `enqueue` writes it (Go's encoding/json of `job`).
private struct PeerJob: Encodable {
    var ID: String
    var Phone: String
    var Locale: String
}

/// Which job each phone number's SMS belongs to: the peer's provider call carries the number
/// (`To`), the watch is keyed by the job.
private final class ExpectedSMS: Sendable {
    private let jobs = Mutex<[String: String]>([:])

    func expect(_ phone: String, id: String) { jobs.withLock { $0[phone] = id } }
    func take(_ phone: String) -> String? { jobs.withLock { $0.removeValue(forKey: phone) } }
}
