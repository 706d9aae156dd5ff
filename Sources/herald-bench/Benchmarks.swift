import AMQP
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
import ServiceLifecycle

/// Baseline: the broker alone. Publish `count` messages with confirms to a queue and
/// consume them with manual acks at the same prefetch the worker uses. `pacedRate`: published
/// at that steady rate instead of all at once, the floor under the paced SMS run's latency.
func brokerBaseline(count: Int, pacedRate: Double? = nil, configuration: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    let connection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "bench-baseline"), logger: logger)
    let consumerConnection = AMQPConnection(configuration: try configuration.amqp.connectionConfiguration(name: "bench-baseline-consumer"), logger: logger)
    connection.start()
    consumerConnection.start()
    try await connection.waitUntilConnected(timeout: .seconds(10))
    try await consumerConnection.waitUntilConnected(timeout: .seconds(10))
    let queue = "\(configuration.amqp.namespace).baseline"
    try await connection.declare(.init(queues: [.init(name: queue, arguments: ["x-queue-type": .string(configuration.amqp.queueType.rawValue)])]))
    let watch = Stopwatch()
    let consumer = consumerConnection.consume(queue: queue, prefetch: UInt16(configuration.amqp.prefetch))
    let consuming = Task {
        for await delivery in consumer {
            try? await delivery.ack()
            if watch.finish(delivery.properties.messageID ?? "") >= count { break }
        }
    }
    let body = Array(try JSONEncoder().encode(SMSVerificationJob(verificationID: "v", phoneNumber: "+4915112345678")))
    let meter = try CPUMeter.start()
    let publish: @Sendable (String) async throws -> Void = { id in
        try await connection.publish(body: body, exchange: "", routingKey: queue, properties: JobEnvelope(messageID: id, typeName: SMSVerificationJob.typeName).properties())
    }
    if let pacedRate {
        try await publishPaced(count: count, rate: pacedRate, watch: watch, publish)
    } else {
        try await publishAll(count: count, watch: watch, publish)
    }
    await consuming.value
    let cpu = try meter.stop()
    try await connection.deleteQueue(queue)
    await connection.close()
    await consumerConnection.close()
    var result = watch.result("broker publish+consume" + (pacedRate.map { String(format: ", paced at %.0f/s", $0) } ?? "") + " (baseline)")
    result.cpu = cpu
    return result
}

/// Herald: the same count of `sms.verification` jobs through HeraldClient and a worker
/// (decode, claim, dev outbox handler, group commit with the ledger, ack), measured to the
/// moment each outcome's transaction writes it.
func runnerEndToEnd(count: Int, workers: Int, configuration: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    try await workersEndToEnd(
        count: count, workers: workers, configuration: configuration, logger: logger,
        name: "herald sms jobs, \(workers) worker\(workers == 1 ? "" : "s") (dev outbox)",
        makeHandler: { TimedHandler(inner: DevOutboxHandler<SMSVerificationJob>(configuration: .init(), recipient: { Redact.phone($0.phoneNumber) }), watch: $0) },
        job: { id in SMSVerificationJob(verificationID: id, phoneNumber: "+4915112345678") })
}

/// `count` jobs published through HeraldClient to `workers` in-process workers, each
/// assembled as an executable assembles it; the watch runs from publish to the commit of
/// each outcome. The namespace's topology is declared first and deleted after. The CPU of
/// the components is measured from the first publish to the last outcome (the workers are in
/// herald-bench: their CPU is in `bench`); `statements`, when given, is reset before the
/// first publish and read after the last outcome.
func workersEndToEnd<Handler: JobHandler>(
    count: Int, workers: Int, configuration: HeraldConfiguration, logger: Logger, statements: BenchStatements? = nil, name: String,
    makeHandler: (Stopwatch) throws -> Handler, job: @escaping @Sendable (String) -> any HeraldJob
) async throws -> BenchResult {
    let watch = Stopwatch()
    let topology = HeraldTopology(configuration.amqp, configuration.runner)
    let client = try HeraldClient(configuration: configuration.amqp, logger: logger)
    try await client.connection.waitUntilConnected(timeout: .seconds(10))
    try await client.connection.declare(topology.all)
    var groups: [ServiceGroup] = []
    var tasks: [Task<Void, any Error>] = []
    for _ in 0..<workers {
        let worker = try WorkerServices(kind: Handler.Job.kind, handler: try makeHandler(watch), configuration: configuration, connectionName: "bench-worker", logger: logger)
        let group = worker.serviceGroup(logger: logger)
        groups.append(group)
        tasks.append(Task { try await group.run() })
        try await worker.connection.waitUntilConnected(timeout: .seconds(10))
    }
    try await statements?.reset()
    let meter = try CPUMeter.start()
    try await publishAll(count: count, watch: watch) { id in
        try await client.enqueue(job(id), messageID: id)
    }
    // A job that never finishes (a provider that keeps failing) fails the run instead of hanging it.
    let deadline = ContinuousClock.now + .seconds(600)
    while watch.count < count {
        guard ContinuousClock.now < deadline else { throw BenchFailure("\(name): only \(watch.count) of \(count) outcomes within 600 s") }
        try await Task.sleep(for: .milliseconds(20))
    }
    var result = watch.result(name)
    result.cpu = try meter.stop()
    result.statements = try await statements?.read() ?? []
    for group in groups { await group.triggerGracefulShutdown() }
    for task in tasks { _ = try? await task.value }
    for queue in topology.all.queues { try? await client.connection.deleteQueue(queue.name) }
    for exchange in topology.all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
    await client.close()
    return result
}

/// Publishes from 32 concurrent tasks, each awaiting its broker confirm.
func publishAll(count: Int, watch: Stopwatch, _ publish: @escaping @Sendable (String) async throws -> Void) async throws {
    let run = UUID().uuidString.prefix(8)
    try await withThrowingTaskGroup(of: Void.self) { group in
        let lanes = 32
        for lane in 0..<lanes {
            group.addTask {
                var n = lane
                while n < count {
                    let id = "b\(run)-\(n)"
                    watch.start(id)
                    try await publish(id)
                    n += lanes
                }
            }
        }
        try await group.waitForAll()
    }
}

/// Any handler, stopping the watch when its outcome is written.
struct TimedHandler<Inner: JobHandler>: JobHandler {
    let inner: Inner
    let watch: Stopwatch

    func handle(_ job: Inner.Job, context: JobContext) async throws -> JobOutcome {
        var outcome = try await inner.handle(job, context: context)
        let write = outcome.write
        let (watch, id) = (self.watch, context.envelope.messageID)
        outcome.write = { connection, logger in
            try await write?(connection, logger)
            watch.finish(id)
        }
        return outcome
    }

    func exhausted(_ job: Inner.Job, reason: String, context: JobContext) -> JobOutcome {
        inner.exhausted(job, reason: reason, context: context)
    }
}
