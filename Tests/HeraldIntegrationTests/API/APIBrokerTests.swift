import Foundation
import HeraldStubs
import NIOHTTP1
import Testing
@testable import HeraldRuntime
@testable import HeraldSMS

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

    @Test func aBrokerThatDoesNotConfirmIsA503AndTheRetryIsSentOnce() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let (api, proxy) = try await Self.proxied(harness, environment: ["HERALD_API_PUBLISH_TIMEOUT_MS": "1000", "HERALD_AMQP_HEARTBEAT_SECONDS": "30"])
            let id = "\(harness.namespace)-b1", phone = harness.phone(1)
            let body: [String: Any] = ["verification_id": id, "phone_number": phone]
            proxy.pause()
            let clock = ContinuousClock(), began = clock.now
            let refused = try await api.call(.POST, "/v1/sms/verifications", json: body)
            #expect(refused.status == 503, "\(refused)")
            #expect(clock.now - began < .seconds(10))
            #expect(Int(refused.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1, "\(refused)")
            #expect(refused.error["code"] as? String == "broker_unavailable", "\(refused)")
            // The broker answers again; the client retries with the same id, as the 503 says.
            proxy.resume()
            var retried = try await api.call(.POST, "/v1/sms/verifications", json: body)
            for _ in 0..<20 where retried.status == 503 {
                try await Task.sleep(for: .milliseconds(500))
                retried = try await api.call(.POST, "/v1/sms/verifications", json: body)
            }
            #expect(retried.status == 202, "\(retried)")
            // The first publish may have reached the queue after all (held, not lost): two copies
            // of one id at most, and the ledger sends one SMS.
            _ = try await sms.start()
            try await eventually("the SMS sent") { try await harness.ledger(id)?.0 == "completed" }
            try await Task.sleep(for: .seconds(1))
            #expect(sms.delivered().filter { $0.verificationID == id }.count == 1, "\(sms.delivered().map(\.verificationID))")
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
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
