import AMQP
import Foundation
import HeraldAPIStore
import HeraldClient
import HeraldPhone
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging
import PostgresNIO

/// `BENCH_ONLY=api` (issue 32): herald-api's start (`POST /v1/sms/verifications`: authenticate,
/// parse, the job written to the outbox and relayed, 202 `queued`: no worker decides here; and,
/// issue 45, the same start answered with a herald-sms's decision, ``DecidingWorker``) and check (`POST /v1/sms/verifications/{id}/check`:
/// authenticate, the verifier's transaction) under wrk, as a real release process, next to
/// baselines of the same invocation: a bare Hummingbird route (``BareRoute``) under the same wrk
/// settings, the broker publish+consume baseline, and HeraldClient's enqueue → confirm (the
/// AMQP half of a start, without HTTP). Twice: as fast as answers come at a fixed concurrency,
/// then paced at a fixed rate (a load, not a backlog: the latency and herald-api's memory there).
struct APIBenchmark {
    let configuration: HeraldConfiguration
    let logger: Logger
    /// Messages of the broker baselines run as fast as they go (BENCH_COUNT).
    var brokerCount: Int
    var connections = 32
    var threads = 2
    var seconds = 15
    var warmupSeconds = 3
    var pacedRate = 500.0
    var pacedSeconds = 30
    /// Verifications the as-fast-as-possible check run cycles through (each takes up to
    /// `sms.max_attempts - 1` wrong tries before it would die; the outcome line tells).
    var seeded = 50_000
    /// Other numbers with a wrong try in the last day (``CheckSeed/writeOtherFailures``); 0: the
    /// checks start on an empty `herald.sms_guess_failures` (a fresh deployment's cold plans).
    var otherFailures = 50_000
    /// BENCH_STATEMENTS=1: pg_stat_statements reset before and read after each herald-api run.
    var statements: BenchStatements?

    init(configuration: HeraldConfiguration, logger: Logger, brokerCount: Int, environment: [String: String]) {
        self.configuration = configuration
        self.logger = logger
        self.brokerCount = brokerCount
        func int(_ name: String) -> Int? { environment[name].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } }
        connections = int("BENCH_API_CONNECTIONS") ?? connections
        threads = min(int("BENCH_API_THREADS") ?? threads, connections)
        seconds = int("BENCH_API_SECONDS") ?? seconds
        pacedRate = environment["BENCH_API_RATE"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? pacedRate
        pacedSeconds = int("BENCH_API_PACED_SECONDS") ?? pacedSeconds
        seeded = int("BENCH_API_SEED") ?? seeded
        otherFailures = environment["BENCH_API_OTHER_FAILURES"].flatMap(Int.init).map { max($0, 0) } ?? otherFailures
    }

    /// One row of the table: what the load generator measured and the CPU of each component.
    struct Row {
        var name: String
        var requests: Int
        var seconds: Double
        var p50: Double
        var p99: Double
        var failed = 0
        /// CPU seconds: the server (herald-api, or herald-bench serving the bare route; nil for
        /// the AMQP baselines), the broker, PostgreSQL, the client (wrk, or herald-bench publishing).
        var server: Double?
        var broker: Double
        var postgres: Double
        var client: Double
        var wall: Double
        /// CPU seconds the rest of the machine spent meanwhile (other processes than the components).
        var others: Double = 0
        var statements: [StatementStats] = []
        var rate: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    }

    struct Report {
        var rows: [Row] = []
        var memory: [(String, ProcessMemory)] = []
        var notes: [String] = []
        var loadBefore = ""
        var loadAfter = ""
        func row(_ prefix: String) -> Row? { rows.first { $0.name.hasPrefix(prefix) } }
    }

    func run() async throws -> Report {
        guard WrkLoad.installed else { throw BenchFailure("wrk is not installed: apt-get install wrk (scripts/services.sh install-bench does)") }
        var report = Report()
        report.loadBefore = Self.loadAverage()
        var database = configuration.database
        database.maxConnections = 2
        let client = try Database.makeClient(database, logger: logger)
        let task = Task { await client.run() }
        defer { task.cancel() }

        let keys = APIKeyStore(client: client, hasher: SecretHasher(keyRing: try configuration.secrets.keyRing()))
        let (key, secret) = try await keys.create(name: "herald-bench api", scopes: [.sms], expiresAt: Date().addingTimeInterval(86_400), logger: logger)
        // herald-api's namespace: its jobs queue in the sms work queue (no worker consumes; purged after each run).
        var broker = configuration.amqp
        broker.namespace += "api"
        let topology = HeraldTopology(broker, configuration.runner)
        let publisher = try HeraldClient(configuration: broker, logger: logger)
        try await publisher.connection.waitUntilConnected(timeout: .seconds(10))
        try await publisher.connection.declare(topology.all)
        if otherFailures > 0 { try await CheckSeed.writeOtherFailures(count: otherFailures, client: client, logger: logger) }
        let run = Self.randomHex(9)
        let fast = CheckSeed(client: client, configuration: configuration, logger: logger, prefix: "c\(run)")
        let paced = CheckSeed(client: client, configuration: configuration, logger: logger, prefix: "p\(run)")
        let setting = Setting(authorization: "Basic " + Data("\(key.id):\(secret.revealed)".utf8).base64EncodedString(),
                              namespace: broker.namespace, publisher: publisher, queue: topology.workQueue(.sms),
                              fast: (fast, try await fast.write(count: seeded)),
                              paced: (paced, try await paced.write(count: Int(pacedRate * Double(pacedSeconds + warmupSeconds) * 1.1) + 1_000)))
        // (The paced check's warm-up takes the first verifications once; its run starts again from the first: a second wrong try.)
        /// At the end, and on a failure: the seeded rows, the key, the namespace's queues and exchanges.
        func cleanUp() async {
            try? await fast.delete(count: setting.fast.1)
            try? await paced.delete(count: setting.paced.1)
            try? await CheckSeed.deleteOtherFailures(client: client, logger: logger)
            _ = try? await keys.revoke(id: key.id, logger: logger)
            for queue in topology.all.queues { try? await publisher.connection.deleteQueue(queue.name) }
            for exchange in topology.all.exchanges { try? await publisher.connection.deleteExchange(exchange.name) }
            await publisher.close()
        }
        do {
            guard setting.fast.1 > 0, setting.paced.1 > 0 else { throw BenchFailure("no SMS verification could be seeded for the check runs") }
            try await measure(setting, into: &report)
        } catch {
            await cleanUp()
            throw error
        }
        await cleanUp()
        report.loadAfter = Self.loadAverage()
        return report
    }

    /// What the runs share: the key's `Authorization`, herald-api's namespace and its sms queue,
    /// the verifications seeded for the check runs (and how many were written).
    struct Setting {
        var authorization: String
        var namespace: String
        var publisher: HeraldClient
        var queue: String
        var fast: (CheckSeed, Int)
        var paced: (CheckSeed, Int)
    }

    private func measure(_ setting: Setting, into report: inout Report) async throws {
        let publisher = setting.publisher
        let queue = setting.queue
        func load(_ kind: WrkLoad.Kind, _ url: String, seconds: Int, rate: Double?, seed: (CheckSeed, Int)? = nil) -> WrkLoad {
            WrkLoad(url: url, kind: kind, prefix: seed.map { $0.0.prefix } ?? "a" + Self.randomHex(9), seeded: seed?.1 ?? 0,
                    authorization: setting.authorization, connections: connections, threads: threads, seconds: seconds, rate: rate)
        }
        /// A wrk run; `serverIsBench`: the server is herald-bench's bare route (its own CPU), else herald-api (the worker pid).
        func row(_ name: String, _ result: WrkLoad.Result, serverIsBench: Bool) -> Row {
            Row(name: name, requests: result.requests, seconds: result.seconds, p50: result.p50, p99: result.p99, failed: result.failed,
                server: serverIsBench ? result.cpu.bench : result.cpu.workers, broker: result.cpu.broker, postgres: result.cpu.postgres,
                client: result.client, wall: result.cpu.wall, others: max(0, result.cpu.machine - result.cpu.total - result.client))
        }
        /// An AMQP baseline: herald-bench is the client.
        func row(_ result: BenchResult) -> Row {
            Row(name: result.name, requests: result.count, seconds: result.seconds, p50: result.p50, p99: result.p99,
                broker: result.cpu?.broker ?? 0, postgres: result.cpu?.postgres ?? 0, client: result.cpu?.bench ?? 0, wall: result.cpu?.wall ?? 0,
                others: max(0, (result.cpu?.machine ?? 0) - (result.cpu?.total ?? 0)))
        }
        /// HeraldClient's enqueue, timed to the broker's confirm: what a start does besides HTTP.
        func enqueueToConfirm(count: Int, rate: Double?) async throws -> Row {
            let watch = Stopwatch()
            let meter = try CPUMeter.start()
            let enqueue: @Sendable (String) async throws -> Void = { id in
                try await publisher.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: "+4915112345678", locale: "en"), messageID: id)
                watch.finish(id)
            }
            if let rate { try await publishPaced(count: count, rate: rate, watch: watch, enqueue) } else { try await publishAll(count: count, watch: watch, enqueue) }
            var result = watch.result("HeraldClient enqueue→confirm, " + (rate.map { String(format: "paced at %.0f/s", $0) } ?? "32 at once") + " (baseline)")
            result.cpu = try meter.stop()
            _ = try await publisher.connection.purge(queue: queue)
            return row(result)
        }
        /// A herald-api run, with its statements when asked.
        func apiRow(_ name: String, _ load: WrkLoad, _ api: APIProcess) async throws -> Row {
            try await statements?.reset()
            var result = row(name, try await load.run(serverPID: api.pid), serverIsBench: false)
            result.statements = try await statements?.read() ?? []
            return result
        }
        let paced = String(format: "paced at %.0f/s", pacedRate)

        // As fast as answers come, `connections` at once.
        let bare = try await BareRoute(logger: logger)
        let bareURL = "http://127.0.0.1:\(bare.port)"
        report.rows.append(row(try await brokerBaseline(count: brokerCount, configuration: configuration, logger: logger)))
        report.rows.append(try await enqueueToConfirm(count: brokerCount, rate: nil))
        _ = try await load(.start, bareURL, seconds: warmupSeconds, rate: nil).run(serverPID: nil)
        report.rows.append(row("bare Hummingbird route (baseline)", try await load(.start, bareURL, seconds: seconds, rate: nil).run(serverPID: nil), serverIsBench: true))
        try await withAPI(setting) { api in
            _ = try await load(.start, api.baseURL, seconds: warmupSeconds, rate: nil).run(serverPID: api.pid)
            _ = try await load(.check, api.baseURL, seconds: warmupSeconds, rate: nil, seed: setting.fast).run(serverPID: api.pid)
            _ = try await publisher.connection.purge(queue: queue)
            let start = try await apiRow("herald-api start (outbox, 202 queued)", load(.start, api.baseURL, seconds: seconds, rate: nil), api)
            let queued = try await publisher.connection.purge(queue: queue)
            report.rows.append(start)
            report.notes.append("start: \(queued) jobs queued during the run, \(start.requests) answers counted by wrk (it leaves out those in flight at the end)")
            report.rows.append(try await apiRow("herald-api check (wrong code)", load(.check, api.baseURL, seconds: seconds, rate: nil, seed: setting.fast), api))
            let outcome = try await setting.fast.0.outcome(count: setting.fast.1)
            report.notes.append("check: \(setting.fast.1) verifications seeded, \(outcome.tries) wrong tries recorded (warm-up included), "
                                + "\(outcome.dead) codes dead, \(outcome.lockedOut) numbers locked out")
            if let memory = ProcessMemory.read(api.pid) { report.memory.append(("herald-api, as fast as answers come", memory)) }
        }

        // The start answered with its decision (issue 45): a herald-sms decides each start and
        // herald-api waits for its answer (api.decision_wait_ms 3 s). Its CPU is in "others".
        let worker = try await DecidingWorker(configuration: configuration, publisher: publisher, namespace: setting.namespace, queue: queue)
        do {
            try await withAPI(setting, decisionWaitMilliseconds: 3_000) { api in
                _ = try await load(.start, api.baseURL, seconds: warmupSeconds, rate: nil).run(serverPID: api.pid)
                report.rows.append(try await apiRow("herald-api start with decision (herald-sms deciding)", load(.start, api.baseURL, seconds: seconds, rate: nil), api))
                report.rows.append(try await apiRow("herald-api start with decision, \(paced)", load(.start, api.baseURL, seconds: pacedSeconds, rate: pacedRate), api))
                if let memory = ProcessMemory.read(api.pid) { report.memory.append(("herald-api, start with decision (as fast, then \(paced))", memory)) }
            }
        } catch {
            await worker.stop()
            throw error
        }
        await worker.stop()

        // Paced at `pacedRate`, the same connections: a load, not a backlog.
        let pacedCount = Int(pacedRate * Double(pacedSeconds))
        report.rows.append(row(try await brokerBaseline(count: pacedCount, pacedRate: pacedRate, configuration: configuration, logger: logger)))
        report.rows.append(try await enqueueToConfirm(count: pacedCount, rate: pacedRate))
        report.rows.append(row("bare Hummingbird route, \(paced) (baseline)", try await load(.start, bareURL, seconds: pacedSeconds, rate: pacedRate).run(serverPID: nil),
                               serverIsBench: true))
        await bare.close()
        // A new herald-api, warmed up at the paced rate (start, then check): its peak resident set (VmHWM) is the one of this load.
        try await withAPI(setting) { api in
            if let memory = ProcessMemory.read(api.pid) { report.memory.append(("herald-api, started, before any request", memory)) }
            _ = try await load(.start, api.baseURL, seconds: warmupSeconds, rate: pacedRate).run(serverPID: api.pid)
            _ = try await load(.check, api.baseURL, seconds: warmupSeconds, rate: pacedRate, seed: setting.paced).run(serverPID: api.pid)
            _ = try await publisher.connection.purge(queue: queue)
            report.rows.append(try await apiRow("herald-api start, \(paced)", load(.start, api.baseURL, seconds: pacedSeconds, rate: pacedRate), api))
            _ = try await publisher.connection.purge(queue: queue)
            report.rows.append(try await apiRow("herald-api check, \(paced)", load(.check, api.baseURL, seconds: pacedSeconds, rate: pacedRate, seed: setting.paced), api))
            let outcome = try await setting.paced.0.outcome(count: setting.paced.1)
            report.notes.append("paced check: \(setting.paced.1) verifications seeded, \(outcome.tries) wrong tries recorded, "
                                + "\(outcome.dead) codes dead, \(outcome.lockedOut) numbers locked out")
            if let memory = ProcessMemory.read(api.pid) { report.memory.append(("herald-api, \(paced) (its only load)", memory)) }
        }
    }

    /// A herald-api process for `body`, stopped (SIGTERM) after it, thrown or not.
    private func withAPI(_ setting: Setting, decisionWaitMilliseconds: Int = 0, _ body: (APIProcess) async throws -> Void) async throws {
        let api = try await APIProcess(configuration: configuration, namespace: setting.namespace, decisionWaitMilliseconds: decisionWaitMilliseconds)
        do {
            try await body(api)
        } catch {
            await api.stop()
            throw error
        }
        await api.stop()
    }

    static func randomHex(_ count: Int) -> String {
        String((0..<count).map { _ in "0123456789abcdef".randomElement()! })
    }

    /// /proc/loadavg's first three fields.
    static func loadAverage() -> String {
        (procText("/proc/loadavg") ?? "").split(separator: " ").prefix(3).joined(separator: " ")
    }
}
