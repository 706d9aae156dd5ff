import Foundation
import HeraldClient
import HeraldCore
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
    var pids: [pid_t] = []
    for _ in 0..<processes { pids.append(try spawn(executable, environment: environment)) }
    defer {
        for pid in pids { kill(pid, SIGTERM) }
        for pid in pids { var status: Int32 = 0; waitpid(pid, &status, 0) }
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

/// Starts `executable` with `environment`, its output discarded.
private func spawn(_ executable: String, environment: [String: String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = [strdup(executable), nil]
    defer { argv.forEach { free($0) } }
    let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { env.forEach { free($0) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, executable, &actions, nil, argv, env)
    guard result == 0 else { throw BenchFailure("cannot start \(executable): error \(result)") }
    return pid
}
