import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
import NIOHTTP1
import Testing

/// herald-api between its clients and a broker that stops answering, and under SIGTERM: it
/// answers only what the broker confirmed, a 503 the client retries loses nothing and sends
/// once, and the requests in flight at SIGTERM get their answers.
@Suite(.needsServers) struct APIBrokerTests {
    /// herald-api's broker connection through a proxy the test can pause (bytes held both ways).
    static func proxied(_ harness: Harness, environment: [String: String] = [:]) async throws -> (APIProcess, FreezingProxy) {
        var broker = try #require(URLComponents(string: TestEnvironment.amqpURL))
        let proxy = try FreezingProxy(targetPort: broker.port ?? 5672)
        harness.onClose { proxy.stop() }
        broker.port = proxy.port
        let api = try await APIProcess(harness, environment: ["HERALD_AMQP_URL": try #require(broker.string)].merging(environment) { $1 })
        return (api, proxy)
    }

    /// A broker that stops answering (its bytes held, the connection still up): a start is
    /// recorded in the outbox and answered 202 `queued` once its decision wait runs out; the
    /// client's retries with the same id are too; when the broker answers again the job goes out
    /// and one SMS is sent. A broker known to be away answers 503 at once and records nothing.
    @Test func aStartRecordedWhileTheBrokerIsStuckIsSentOnceWhateverTheRetries() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let (api, proxy) = try await Self.proxied(harness, environment: ["HERALD_API_DECISION_WAIT_MS": "1000", "HERALD_AMQP_HEARTBEAT_SECONDS": "30"])
            let id = "\(harness.namespace)-b1", phone = harness.phone(1)
            let body: [String: Any] = ["verification_id": id, "phone_number": phone]
            proxy.pause()
            let clock = ContinuousClock(), began = clock.now
            let first = try await api.call(.POST, "/v1/sms/verifications", json: body)
            #expect(first.status == 202 && first.json["status"] as? String == "queued", "\(first)")
            #expect(clock.now - began < .seconds(10))
            // The job is in the outbox: another process's jobs relay (here herald-sms's) may
            // have published it already, and the retry then reads its decision from the record.
            let retried = try await api.call(.POST, "/v1/sms/verifications", json: body)
            #expect(retried.status == 202 || retried.json["status"] as? String == "sending", "\(retried)")
            proxy.resume()
            try await eventually("the SMS sent") { try await harness.ledger(id)?.0 == "completed" }
            // Decided: the next retry is answered from the record, and starts no job.
            let later = try await api.call(.POST, "/v1/sms/verifications", json: body)
            #expect(later.status == 200 && later.json["status"] as? String == "sending", "\(later)")
            try await Task.sleep(for: .seconds(1))
            #expect(sms.delivered().filter { $0.verificationID == id }.count == 1, "\(sms.delivered().map(\.verificationID))")
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
            #expect(try await harness.database.query("SELECT 1 FROM herald.event_outbox WHERE message_id = \(id)").collect().isEmpty)
        }
    }

    /// herald-api's broker connection lost (a dead peer) and made again: its replies queue is
    /// declared and consumed again, and starts are answered with the worker's decision again
    /// (an exclusive queue of the old connection's would refuse the new one's declaration).
    @Test func decisionsComeBackAfterTheBrokerConnectionIsMadeAgain() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let (api, proxy) = try await Self.proxied(harness, environment: ["HERALD_AMQP_HEARTBEAT_SECONDS": "2"])
            let first = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-c0", "phone_number": harness.phone(1)])
            #expect(first.status == 200 && first.json["status"] as? String == "sending", "\(first)")
            proxy.freezeExistingConnections()
            try await Task.sleep(for: .seconds(6))
            var answers: [Int] = []
            for n in 1...30 {
                let answer = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": "\(harness.namespace)-c\(n)", "phone_number": harness.phone(1 + n)])
                answers.append(answer.status)
                if answer.status == 200 { break }
                try await Task.sleep(for: .seconds(1))
            }
            #expect(answers.last == 200, "\(answers)")
        }
    }

    /// The broker away: a start answers 503 at once, and nothing of it is sent, then or later.
    @Test func aStartWhileTheBrokerIsAwayIsA503AndSendsNothing() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            _ = try await sms.start()
            let (api, proxy) = try await Self.proxied(harness, environment: ["HERALD_AMQP_HEARTBEAT_SECONDS": "2"])
            let id = "\(harness.namespace)-b2"
            // A dead peer (bytes held, no new connection taken): two missed heartbeats end the connection.
            proxy.freezeExistingConnections()
            proxy.stop()
            try await Task.sleep(for: .seconds(8))
            let refused = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": id, "phone_number": harness.phone(2)])
            #expect(refused.status == 503 && refused.error["code"] as? String == "broker_unavailable", "\(refused)")
            #expect(Int(refused.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1, "\(refused)")
            #expect(try await harness.database.query("SELECT 1 FROM herald.event_outbox WHERE message_id = \(id)").collect().isEmpty)
            try await Task.sleep(for: .seconds(2))
            #expect(!sms.delivered().contains { $0.verificationID == id })
        }
    }

    /// Requests waiting on the broker's confirm when SIGTERM comes: /readyz says draining,
    /// each request gets its answer once the broker confirms, then the process exits 0.
    @Test func sigtermAnswersTheRequestsInFlightThenExits() async throws {
        try await withHarness { harness in
            let (api, proxy) = try await Self.proxied(harness, environment: ["HERALD_API_PUBLISH_TIMEOUT_MS": "20000", "HERALD_AMQP_HEARTBEAT_SECONDS": "30"])
            proxy.pause()
            let ids = (0..<3).map { "\(harness.namespace)-d\($0)" }
            let answers = Task {
                try await withThrowingTaskGroup(of: APIProcess.Answer.self) { group in
                    for (n, id) in ids.enumerated() {
                        group.addTask { try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": id, "phone_number": harness.phone(10 + n)]) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            try await Task.sleep(for: .seconds(1))
            api.process.signal(SIGTERM)
            try await eventually("draining") {
                let ready = try await ChildProcess.run("/usr/bin/curl", ["-s", "http://127.0.0.1:\(api.process.port)/readyz"], timeout: .seconds(5))
                return ready.contains("draining")
            }
            #expect(api.process.child.exitStatus == nil, "exited with requests in flight")
            proxy.resume()
            let done = try await answers.value
            #expect(done.map(\.status) == [202, 202, 202], "\(done)")
            #expect(await api.process.waitForExit(timeout: .seconds(30)) == 0, "\(api.process.tail)")
            try await eventually("three jobs queued") { try await harness.depth(harness.topology.workQueue(.sms)) == 3 }
        }
    }

    /// systemd's `ExecReload` sends SIGHUP; with no certificate to reload it is logged, and the
    /// process serves on (the default action would end it).
    @Test func aSighupWithoutTLSIsLoggedAndServingGoesOn() async throws {
        try await withHarness { harness in
            let api = try await APIProcess(harness)
            api.process.signal(SIGHUP)
            try await eventually("the SIGHUP logged") { api.process.log.contains("nothing to reload") }
            #expect(api.process.child.exitStatus == nil)
            #expect(try await api.call(.GET, "/v1/sms/verifications/\(harness.namespace)-none").status == 404)
        }
    }
}
