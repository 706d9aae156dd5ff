import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The job runner against the real RabbitMQ and PostgreSQL.
@Suite(.needsServers) struct RunnerTests {
    @Test func aJobIsHandledOnceAndAckedAfterItsOutcomeIsCommitted() async throws {
        try await withHarness() { harness in
            let handler = CountingHandler()
            let worker = try await harness.startRunner(.sms, handler)
            let id = try await harness.enqueue(harness.sms(1))
            try await eventually("job completed") { try await harness.ledger(id)?.0 == "completed" }
            #expect(handler.count(id) == 1)
            #expect(try await harness.outboxCount([id]) == 1)
            // Acked: nothing left in the queue, nothing unacked (a restart of the consumer gets nothing back).
            try await worker.stop()
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
        }
    }

    @Test func theSameMessageIDDeliveredTwiceRunsTheSideEffectOnce() async throws {
        try await withHarness() { harness in
            let handler = CountingHandler(delay: .milliseconds(200))
            let worker = try await harness.startRunner(.sms, handler)
            let id = UUID().uuidString
            // Twice at once (concurrent duplicate) and once more after completion.
            _ = try await harness.enqueue(harness.sms(2), messageID: id)
            _ = try await harness.enqueue(harness.sms(2), messageID: id)
            try await eventually("job completed") { try await harness.ledger(id)?.0 == "completed" }
            _ = try await harness.enqueue(harness.sms(2), messageID: id)
            try await eventually("all copies consumed") {
                let work = try await harness.depth(harness.topology.workQueue(.sms))
                let delayed = try await harness.depth(harness.topology.retryQueue(.sms, tier: 0))
                return work == 0 && delayed == 0
            }
            try await Task.sleep(for: .milliseconds(500))
            #expect(handler.count(id) == 1)
            #expect(try await harness.outboxCount([id]) == 1)
            try await worker.stop()
        }
    }

    @Test func malformedInputIsDeadLetteredWithAReasonAndValidJobsPass() async throws {
        try await withHarness() { harness in
            let handler = CountingHandler()
            let worker = try await harness.startRunner(.sms, handler) { $0.runner.maxMessageBytes = 4096 }
            func props(_ id: String, type: String? = SMSVerificationJob.typeName) -> AMQPProperties {
                var p = JobEnvelope(messageID: id, typeName: type ?? "").properties()
                p.type = type
                return p
            }
            let valid = { (n: Int) in String(decoding: try! JSONEncoder().encode(harness.sms(n)), as: UTF8.self) }
            let bad: [(String, [UInt8], AMQPProperties, String)] = [
                ("not-json", Array("hello".utf8), props("bad-1"), "JSON object"),
                ("truncated", Array("{\"version\":1,\"verif".utf8), props("bad-2"), "not valid JSON"),
                ("invalid-utf8", [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D], props("bad-3"), "UTF-8"),
                ("wrong-schema", Array(#"{"version":1,"verification_id":7,"phone_number":"+4915112345678","purpose":"sign_in"}"#.utf8), props("bad-4"), "wrong type"),
                ("missing-field", Array(#"{"version":1,"phone_number":"+4915112345678","purpose":"sign_in"}"#.utf8), props("bad-5"), "missing required field"),
                ("unknown-type", Array(valid(5).utf8), props("bad-6", type: "sms.teleport.v1"), "unknown job type"),
                ("oversize", Array(("{\"pad\":\"" + String(repeating: "x", count: 5000) + "\"}").utf8), props("bad-7"), "of 5010 bytes exceeds runner.max_message_bytes (4096)"),
                ("no-message-id", Array(valid(6).utf8), { var p = props("x"); p.messageID = nil; return p }(), "message_id"),
                ("bad-phone", Array(#"{"version":1,"verification_id":"v","phone_number":"12345","purpose":"sign_in"}"#.utf8), props("bad-9"), "E.164"),
            ]
            var validIDs: [String] = []
            for (index, item) in bad.enumerated() {
                try await harness.client.publishRaw(body: item.1, routingKey: "sms.verification", properties: item.2)
                validIDs.append(try await harness.enqueue(harness.sms(100 + index)))
            }
            try await eventually("valid jobs completed") {
                try await harness.statuses(validIDs).values.filter { $0 == "completed" }.count == validIDs.count
            }
            try await eventually("dead letters arrived") { try await harness.depth(harness.topology.deadLetterQueue(.sms)) == bad.count }
            let letters = try await harness.drainDeadLetters(.sms)
            #expect(letters.count == bad.count)
            for (name, body, properties, expected) in bad {
                // An oversize body was never kept: its dead letter has an empty body.
                let letter = letters.first { letter in properties.messageID.map { letter.properties.messageID == $0 } ?? (letter.body == body) }
                guard let reason = letter?.properties.deadLetterStamp?.reason else {
                    Issue.record("\(name): no dead letter with a reason")
                    continue
                }
                #expect(reason.contains(expected), "\(name): \(reason)")
                let stamp = letter?.properties.deadLetterStamp
                #expect(stamp?.category == "invalid")
                #expect(stamp?.queue == harness.topology.workQueue(.sms))
                #expect(stamp?.routingKey == "sms.verification")
                #expect(stamp?.attempts == 0)
                #expect(stamp.map { abs($0.at.timeIntervalSinceNow) < 120 } == true, "\(name): dead-lettered at \(String(describing: stamp?.at))")
            }
            #expect(handler.total == validIDs.count)
            #expect(worker.health.brokerUp)
            try await worker.stop()
        }
    }

    @Test func aTransientFailureIsRetriedWithGrowingDelaysThenDeadLetteredAndReplayable() async throws {
        try await withHarness(retryDelays: [200, 600, 1200], maxAttempts: 3) { harness in
            let handler = CountingHandler(failing: true)
            let worker = try await harness.startRunner(.sms, handler)
            let id = try await harness.enqueue(harness.sms(3))
            try await eventually("dead-lettered") { try await harness.ledger(id)?.0 == "dead" }
            let times = handler.times(id)
            #expect(times.count == 3)
            if times.count == 3 {
                let first = times[1] - times[0], second = times[2] - times[1]
                #expect(first >= .milliseconds(200), "first retry waited \(first)")
                // Lower bounds only: the tiers are 200 and 600 ms; an upper bound or a comparison of
                // the two waits would measure the machine's load, not the runner.
                #expect(second >= .milliseconds(600), "second retry waited \(second)")
            }
            try await eventually("in the dead-letter queue") { try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 1 }

            // The provider recovers; the operator replays with heraldctl.
            handler.setFailing(false)
            let output = try await runHeraldctl(["dlq", "replay", "--kind", "sms", "--output", "json"], namespace: harness.namespace)
            #expect(output.contains("\"replayed\" : 1"))
            try await eventually("completed after replay") { try await harness.ledger(id)?.0 == "completed" }
            #expect(handler.count(id) == 4)
            #expect(try await harness.outboxCount([id]) == 1)
            #expect(try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 0)
            try await worker.stop()
        }
    }

    @Test func aHandlerRunThatNeverAnswersIsAbandonedAndRunAgain() async throws {
        try await withHarness() { harness in
            let handler = HangsOnceHandler()
            let worker = try await harness.startRunner(.sms, handler) { $0.runner.handlerTimeoutSeconds = 1 }
            let id = try await harness.enqueue(harness.sms(8))
            try await eventually("completed by a second run") { try await harness.ledger(id)?.0 == "completed" }
            #expect(handler.runs == 2, "the hung run was abandoned after the timeout and the handler ran again")
            #expect(try await harness.ledger(id)?.1 == 1, "the same claim: not a retry through the delay queues")
            try await worker.stop()
        }
    }

    @Test func outcomesEmitEventsThroughTheOutbox() async throws {
        try await withHarness() { harness in
            let events = "\(harness.namespace).test-events"
            try await harness.connection.declare(.init(queues: [.init(name: events, durable: false, autoDelete: false)],
                                                       bindings: [.init(queue: events, exchange: harness.topology.eventsExchange, routingKey: "sms.#")]))
            let worker = try await harness.startRunner(.sms, CountingHandler())
            let id = try await harness.enqueue(harness.sms(4))
            try await eventually("event published") { try await harness.depth(events) == 1 }
            let event = try #require(try await harness.connection.get(queue: events))
            #expect(event.routingKey == "sms.sent")
            #expect(event.properties.type == "sms.sent.v1")
            let body = try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any]
            #expect(body?["message_id"] as? String == id)
            #expect(body?["version"] as? Int == 1)
            try await event.ack()
            try await harness.connection.deleteQueue(events)
            try await worker.stop()
        }
    }

    @Test func enqueueOfAnUnroutableOrInvalidJobFails() async throws {
        try await withHarness() { harness in
            await #expect(throws: HeraldClientError.self) {
                try await harness.client.enqueue(SMSVerificationJob(verificationID: "v", phoneNumber: "nope"))
            }
            try await harness.connection.deleteQueue(harness.topology.workQueue(.sms))
            await #expect(throws: HeraldClientError.noQueue(routingKey: "sms.verification")) {
                try await harness.enqueue(harness.sms(5))
            }
        }
    }
}

/// Runs the built heraldctl against a test namespace; returns its output.
func runHeraldctl(_ arguments: [String], namespace: String) async throws -> String {
    var environment = ProcessInfo.processInfo.environment
    environment["HERALD_AMQP_URL"] = TestEnvironment.amqpURL
    environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
    environment["HERALD_AMQP_NAMESPACE"] = namespace
    environment["HERALD_DATABASE_TLS"] = "disable"
    return try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", arguments, environment: environment)
}

/// Its first run never answers and ignores cancellation, like a query on a connection that
/// died without failing its promise; later runs complete.
final class HangsOnceHandler: JobHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var runs: Int { lock.withLock { count } }

    func handle(_ job: SMSVerificationJob, context: JobContext) async throws -> JobOutcome {
        let run = lock.withLock { count += 1; return count }
        if run == 1 { await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in } }
        return .completed()
    }
}
