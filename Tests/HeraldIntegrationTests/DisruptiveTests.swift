import AMQP
import Foundation
import Testing
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldSMS

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

