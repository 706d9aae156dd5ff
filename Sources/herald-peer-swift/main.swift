import AMQP
import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO

// herald-peer-swift work 0 C (issue 48, make bench): the Go peer's bare SMS job (bench/peers/go/main.go:
// decode, a code and its HMAC, INSERT `pending`, the provider's POST, UPDATE `sent`, ack), written in
// Swift on the libraries herald-sms runs on (Herald's own AMQP driver over rabbitmq-c, a postgres-nio pool
// with the two statements prepared, AsyncHTTPClient, swift-crypto) and linking nothing else of Herald's: no
// runtime, ledger, grouping, events, metrics or logs. Kept in step with main.go (bench/peers/go/README.md). C jobs in flight (the prefetch; the pool holds as many
// connections), until it is stopped. It reads what the Go peer reads: AMQP_URL, PG_URL (its table is
// the Go peer's, made by `herald-peer-go prepare`), PEER_QUEUE, PEER_QUEUE_TYPE and PROVIDER_URL.
// herald-bench runs it beside herald-sms and the Go peer (Sources/herald-bench/Peer.swift): what it
// spends per job, and its memory, are the Swift stack's before Herald adds anything.

struct PeerFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, arguments[1] == "work", arguments[2] == "0", let concurrency = Int(arguments[3]), concurrency > 0 else {
    FileHandle.standardError.write(Data("usage: herald-peer-swift work 0 CONCURRENCY (consumes until stopped)\n".utf8))
    exit(2)
}
let environment = ProcessInfo.processInfo.environment
func required(_ name: String) -> String {
    guard let value = environment[name], !value.isEmpty else {
        FileHandle.standardError.write(Data("herald-peer-swift: \(name) is required\n".utf8))
        exit(2)
    }
    return value
}
var logger = Logger(label: "herald-peer-swift")
logger.logLevel = .error

let queue = required("PEER_QUEUE")
let postgres = try PostgresClient(configuration: poolConfiguration(pgURL: required("PG_URL"), maximumConnections: concurrency), backgroundLogger: logger)
var settings = HTTPClient.Configuration()
settings.tracing.tracer = nil
settings.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency)
let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
var broker = AMQPConfiguration(url: try AMQPURL(required("AMQP_URL")))
broker.connectionName = "bench-peer-swift"
let amqp = AMQPConnection(configuration: broker, logger: logger)
amqp.start()
try await amqp.waitUntilConnected(timeout: .seconds(10))
try await amqp.declare(AMQPTopology(queues: [.init(name: queue, arguments: ["x-queue-type": .string(environment["PEER_QUEUE_TYPE"] ?? "quorum")])]))
let worker = PeerWorker(postgres: postgres, http: http, provider: required("PROVIDER_URL"), logger: logger)
await withDiscardingTaskGroup { group in
    group.addTask { await postgres.run() }
    // The prefetch bounds the jobs in flight, as the Go peer's Qos does.
    for await delivery in amqp.consume(queue: queue, prefetch: UInt16(concurrency)) {
        group.addTask { await worker.work(delivery) }
    }
    // The consumer ended (the connection is gone for good): exit, as the Go peer does, instead of waiting on the pool.
    group.cancelAll()
}
FileHandle.standardError.write(Data("herald-peer-swift: the consumer ended\n".utf8))
exit(1)
