import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

/// Scenarios that restart or stop the shared servers. `make test` runs this suite alone,
/// after the others (`swift test --filter Disruptive --no-parallel`).
@Suite(.needsServers, .disruptive, .serialized) struct DisruptiveTests {
    @Test func theWorkerReconnectsAfterARabbitMQRestartAndConfirmedJobsAreNotLost() async throws {
        try await withHarness() { harness in
            let handler = CountingHandler()
            let worker = try await harness.startRunner(.sms, handler)
            var ids: [String] = []
            for n in 0..<50 { ids.append(try await harness.enqueue(harness.sms(n))) }
            // Publish on while the broker restarts: each enqueue returns once confirmed.
            let publisher = Task { () -> [String] in
                var more: [String] = []
                for n in 0..<100 {
                    if let id = try? await harness.enqueue(harness.sms(500 + n)) { more.append(id) }
                    try? await Task.sleep(for: .milliseconds(30))
                }
                return more
            }
            try await Task.sleep(for: .milliseconds(300))
            try await TestEnvironment.services("restart-rabbitmq")
            let confirmed = ids + (await publisher.value)
            #expect(confirmed.count == 150)
            try await eventually(timeout: .seconds(60), "every confirmed job completed") {
                try await harness.statuses(confirmed).values.filter { $0 == "completed" }.count == confirmed.count
            }
            #expect(try await harness.outboxCount(confirmed) == confirmed.count)
            #expect(worker.connection.isConnected)
            try await worker.stop()
        }
    }

    /// RabbitMQ stopped under herald-api (issue 32): a start answers 503 with Retry-After at once
    /// (no connection, nothing enqueued), /readyz says so; once the broker is back herald-api
    /// reconnects, the client's retry with the same id is 202, and one SMS goes out.
    @Test func theBrokerStoppedUnderHeraldAPIIsA503ThenTheRetryIsSentOnce() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let api = try await APIProcess(harness)
            let id = "\(harness.namespace)-down", body: [String: Any] = ["verification_id": id, "phone_number": harness.phone(1)]
            try await TestEnvironment.services("stop-rabbitmq")
            do {
                var refused = try await api.call(.POST, "/v1/sms/verifications", json: body)
                // The connection's loss may take a heartbeat to be seen: until then the publish waits for its confirm (503 as well).
                for _ in 0..<10 where refused.status != 503 { refused = try await api.call(.POST, "/v1/sms/verifications", json: body) }
                #expect(refused.status == 503 && refused.error["code"] as? String == "broker_unavailable", "\(refused)")
                #expect(Int(refused.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
                try await eventually(timeout: .seconds(30), "not ready") { !(await api.process.ready()) }
            } catch {
                try await TestEnvironment.services("start-rabbitmq")
                throw error
            }
            try await TestEnvironment.services("start-rabbitmq")
            try await eventually(timeout: .seconds(60), "herald-api ready again") { await api.process.ready() }
            let retried = try await api.call(.POST, "/v1/sms/verifications", json: body)
            #expect(retried.status == 202, "\(retried)")
            try await harness.connection.waitUntilConnected(timeout: .seconds(60))
            _ = try await sms.start()
            try await eventually(timeout: .seconds(30), "the SMS sent") { try await harness.ledger(id)?.0 == "completed" }
            try await Task.sleep(for: .seconds(1))
            #expect(sms.delivered().filter { $0.verificationID == id }.count == 1)
        }
    }

    @Test func aDatabaseOutageHoldsJobsThenTheBacklogDrains() async throws {
        try await withHarness() { harness in
            let handler = CountingHandler()
            let worker = try await harness.startRunner(.sms, handler)
            var ids: [String] = []
            for n in 0..<20 { ids.append(try await harness.enqueue(harness.sms(n))) }
            try await eventually("first jobs completed") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 20 }

            try await TestEnvironment.services("stop-postgres", "immediate")
            var during: [String] = []
            for n in 0..<40 { during.append(try await harness.enqueue(harness.sms(100 + n))) }
            try await Task.sleep(for: .seconds(10))
            // Nothing was acked or dead-lettered while the database was away.
            let waiting = try await harness.connection.queueState(harness.topology.workQueue(.sms))
            let dead = try await harness.depth(harness.topology.deadLetterQueue(.sms))
            #expect(dead == 0)
            #expect(!worker.health.databaseUp)
            try await TestEnvironment.services("start-postgres")

            try await eventually(timeout: .seconds(60), "backlog drained") {
                try await harness.statuses(during).values.filter { $0 == "completed" }.count == during.count
            }
            #expect(try await harness.outboxCount(during) == during.count)
            #expect(try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 0)
            // All 40 were held: either still queued or unacked in the worker's prefetch.
            #expect((waiting?.messageCount ?? 0) + 16 >= 40)
            try await worker.stop()
        }
    }
}

