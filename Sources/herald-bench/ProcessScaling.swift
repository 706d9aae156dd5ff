import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Scaling by processes: `processes` real `herald-sms` executables (the release build next
/// to herald-bench) on one queue, each with its own broker connection, database pool and
/// HTTP client, as an operator scales them. Jobs go through HeraldClient; the watch stops
/// when the local webhook provider receives each job's SMS (its outcome commits right after).
///
/// `controls`: the abuse controls on, through the environment (``SMSControls/environment``).
/// `pacedRate`: the `count` jobs published at this steady rate (msg/s) instead of all at once
/// (a backlog): the latency from publish to the provider's receipt at that load.
/// `variant`: more of the workers' settings, and the words naming them in the run's name
/// (tracing on: ``tracingRuns(count:configuration:logger:)``).
/// The result carries the CPU of each component (the workers' own: the processes'), each
/// process's memory at the end (peak and resident) and, with `statements`, the run's top
/// statements.
func smsProcesses(count: Int, processes: Int, controls: Bool = false, pacedRate: Double? = nil, statements: BenchStatements? = nil,
                  variant: (name: String, environment: [String: String])? = nil,
                  configuration: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    let watch = Stopwatch()
    let provider = try await StubHTTPServer { request in
        let json = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any]
        if let data = json?["data"] as? [String: Any], let id = data["verification_id"] as? String { watch.finish(id) }
        return .init(status: 200, body: #"{"message_id":"bench"}"#)
    }
    let namespace = configuration.amqp.namespace + "p\(processes)"
    let topology = HeraldTopology(namespace: namespace)
    var broker = configuration.amqp
    broker.namespace = namespace
    let client = try HeraldClient(configuration: broker, logger: logger)
    try await client.connection.waitUntilConnected(timeout: .seconds(10))
    try await client.connection.declare(HeraldTopology(broker, configuration.runner).all)

    // The "controls off" rows: no limit in the way, the fraud guard off.
    var environment = BenchExecutables.smsEnvironment(configuration, namespace: namespace, providerURL: provider.baseURL + "/sms")
    if controls { environment.merge(SMSControls.environment) { $1 } }
    if let variant { environment.merge(variant.environment) { $1 } }
    let executable = BenchExecutables.path("herald-sms")
    var workers: [ChildProcess] = []
    for _ in 0..<processes { workers.append(try ChildProcess(executable, [], environment: environment, outputPath: "/dev/null")) }
    defer {
        for worker in workers { worker.signal(SIGTERM) }
        for worker in workers { while worker.isRunning { usleep(10_000) } }
    }
    let queue = topology.workQueue(.sms)
    let ready = ContinuousClock.now + .seconds(30)
    while (try await client.connection.queueState(queue)?.consumerCount ?? 0) < processes {
        guard ContinuousClock.now < ready else { throw BenchFailure("\(processes) herald-sms processes did not all consume within 30 s") }
        try await Task.sleep(for: .milliseconds(100))
    }

    let offset = Int.random(in: 0..<1_000_000_000)
    let counter = Counter()
    let publish: @Sendable (String) async throws -> Void = { id in
        let n = (counter.next() + offset) % 1_000_000_000
        let number = "+4917" + String(format: "%09d", (n * 2_654_435_761) % 1_000_000_000)
        try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: number, locale: "en"), messageID: id)
    }
    try await statements?.reset()
    let meter = try CPUMeter.start(workerPIDs: workers.map(\.pid))
    if let pacedRate {
        try await publishPaced(count: count, rate: pacedRate, watch: watch, publish)
    } else {
        try await publishAll(count: count, watch: watch, publish)
    }
    let deadline = ContinuousClock.now + .seconds(600)
    while watch.count < count {
        guard ContinuousClock.now < deadline else { throw BenchFailure("only \(watch.count) of \(count) SMS arrived") }
        guard workers.allSatisfy(\.isRunning) else { throw BenchFailure("a herald-sms process exited during the run (\(count - watch.count) SMS missing)") }
        try await Task.sleep(for: .milliseconds(20))
    }
    // The last outcomes commit right after their SMS arrive.
    try await Task.sleep(for: .milliseconds(100))
    let name = "herald-sms, \(processes) process\(processes == 1 ? "" : "es")" + (controls ? ", controls on" : "")
        + (pacedRate.map { String(format: ", paced at %.0f/s", $0) } ?? "") + (variant.map { ", \($0.name)" } ?? "")
    var result = watch.result(name)
    result.cpu = try meter.stop()
    result.memory = workers.compactMap { ProcessMemory.read($0.pid) }
    result.statements = try await statements?.read() ?? []
    for queue in HeraldTopology(broker, configuration.runner).all.queues { try? await client.connection.deleteQueue(queue.name) }
    for exchange in HeraldTopology(broker, configuration.runner).all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
    await client.close()
    await provider.close()
    return result
}

/// Publishes `count` jobs at a steady `rate` per second (each at its due time, its confirm
/// awaited in its own task): a load, not a backlog.
func publishPaced(count: Int, rate: Double, watch: Stopwatch, _ publish: @escaping @Sendable (String) async throws -> Void) async throws {
    let run = UUID().uuidString.prefix(8)
    let started = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        var sent = 0
        while sent < count {
            let due = min(count, Int((ContinuousClock.now - started).seconds * rate) + 1)
            while sent < due {
                let id = "p\(run)-\(sent)"
                watch.start(id)
                group.addTask { try await publish(id) }
                sent += 1
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await group.waitForAll()
    }
}
