import Foundation
import HeraldClient
import HeraldCleanup
import HeraldEmail
import HeraldPush
import HeraldRuntime
import HeraldSMS
import HeraldStubs
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Scaling by processes: `processes` real `herald-sms` executables (the release build next
/// to herald-bench) on one queue, each with its own broker connection, database pool and
/// HTTP client, as an operator scales them. Jobs go through HeraldClient; the watch stops
/// when the local webhook provider receives each job's SMS (its outcome commits right after).
func smsProcesses(count: Int, processes: Int, configuration: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
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

    var environment = ProcessInfo.processInfo.environment
    environment["HERALD_AMQP_URL"] = configuration.amqp.url
    environment["HERALD_DATABASE_URL"] = configuration.database.url
    environment["HERALD_AMQP_NAMESPACE"] = namespace
    environment["HERALD_HTTP_ENABLED"] = "false"
    environment["HERALD_LOG_LEVEL"] = "error"
    environment["HERALD_SMS_PROVIDERS"] = "webhook"
    environment["HERALD_SMS_WEBHOOK_URL"] = provider.baseURL + "/sms"
    environment["HERALD_SMS_WEBHOOK_SECRET"] = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    for scope in ["phone", "prefix", "global"] { environment["HERALD_SMS_LIMITS_\(scope.uppercased())_MAX"] = "100000000" }
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald-sms").path
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
    try await publishAll(count: count, watch: watch) { id in
        let n = (counter.next() + offset) % 1_000_000_000
        let number = "+4917" + String(format: "%09d", (n * 2_654_435_761) % 1_000_000_000)
        try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: number, locale: "en"), messageID: id)
    }
    let deadline = ContinuousClock.now + .seconds(600)
    while watch.count < count {
        guard ContinuousClock.now < deadline else { throw BenchFailure("only \(watch.count) of \(count) SMS arrived") }
        try await Task.sleep(for: .milliseconds(20))
    }
    for queue in HeraldTopology(broker, configuration.runner).all.queues { try? await client.connection.deleteQueue(queue.name) }
    for exchange in HeraldTopology(broker, configuration.runner).all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
    await client.close()
    await provider.close()
    return watch.result("herald-sms, \(processes) process\(processes == 1 ? "" : "es") (webhook provider)")
}
