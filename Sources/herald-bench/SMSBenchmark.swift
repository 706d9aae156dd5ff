import Foundation
import HeraldClient
import HeraldCore
import HeraldStubs
import Logging
import ServiceLifecycle

/// `herald-sms` end to end: HeraldClient publishes `sms.verification` jobs; the real
/// SMSHandler decides each in PostgreSQL (code hashed, rate limits counted), renders it and
/// sends it to a local webhook provider (Standard Webhooks signed); the watch stops when the
/// outcome commits (the ack follows at once). Every job has its own random number (the
/// numbers of many people, spread over many prefixes), so every job sends one SMS.
func smsEndToEnd(count: Int, workers: Int, configuration base: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    let provider = try await StubHTTPServer { _ in .init(status: 200, body: #"{"message_id":"bench"}"#) }
    var configuration = base
    configuration.sms.providers = [.webhook]
    configuration.sms.webhook.url = provider.baseURL + "/sms"
    configuration.sms.webhook.secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    // The abuse limits are not what is measured here.
    let unlimited = SMSConfiguration.Limit(max: 100_000_000, windowSeconds: 3600)
    configuration.sms.phoneLimit = unlimited
    configuration.sms.prefixLimit = unlimited
    configuration.sms.globalLimit = unlimited

    let watch = Stopwatch()
    let topology = HeraldTopology(configuration.amqp, configuration.runner)
    let client = try HeraldClient(configuration: configuration.amqp, logger: logger)
    try await client.connection.waitUntilConnected(timeout: .seconds(10))
    try await client.connection.declare(topology.all)
    var groups: [ServiceGroup] = []
    var tasks: [Task<Void, any Error>] = []
    for _ in 0..<workers {
        let handler = TimedSMSHandler(inner: try SMSHandler(configuration: configuration), watch: watch)
        let worker = try WorkerServices(kind: .sms, handler: handler, configuration: configuration, connectionName: "bench-sms", logger: logger)
        let group = worker.serviceGroup(logger: logger)
        groups.append(group)
        tasks.append(Task { try await group.run() })
        try await worker.connection.waitUntilConnected(timeout: .seconds(10))
    }
    // n ↦ n × 2654435761 mod 10⁹ is a bijection (the factor is prime to 10): distinct numbers, spread over every prefix.
    let offset = Int.random(in: 0..<1_000_000_000)
    let counter = Counter()
    try await publishAll(count: count, watch: watch) { id in
        let n = (counter.next() + offset) % 1_000_000_000
        let number = "+4917" + String(format: "%09d", (n * 2_654_435_761) % 1_000_000_000)
        try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: number, locale: "en"), messageID: id)
    }
    while watch.count < count { try await Task.sleep(for: .milliseconds(20)) }
    for group in groups { await group.triggerGracefulShutdown() }
    for task in tasks { _ = try? await task.value }
    for queue in topology.all.queues { try? await client.connection.deleteQueue(queue.name) }
    for exchange in topology.all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
    await client.close()
    let received = provider.requestCount
    await provider.close()
    guard received >= count else { throw BenchFailure("the provider received \(received) of \(count) SMS") }
    return watch.result("herald-sms, \(workers) worker\(workers == 1 ? "" : "s") (webhook provider)")
}

/// The real SMS handler, stopping the watch when its outcome is written.
struct TimedSMSHandler: JobHandler {
    let inner: SMSHandler
    let watch: Stopwatch

    func handle(_ job: SMSVerificationJob, context: JobContext) async throws -> JobOutcome {
        var outcome = try await inner.handle(job, context: context)
        let write = outcome.write
        let (watch, id) = (self.watch, context.envelope.messageID)
        outcome.write = { connection, logger in
            try await write?(connection, logger)
            watch.finish(id)
        }
        return outcome
    }
}

/// Numbers for the jobs, one each.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
