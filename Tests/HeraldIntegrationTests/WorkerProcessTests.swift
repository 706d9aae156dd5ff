import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// Real worker processes: killed and stopped mid-job.
@Suite(.needsServers) struct WorkerProcessTests {
    @Test func aWorkerKilledMidJobLosesNothing() async throws {
        try await withHarness() { harness in
            let slow = ["HERALD_OUTBOX_DELAY_MS": "3000"]
            let first = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: slow)
            try await first.waitUntilReady()
            let id = try await harness.enqueue(harness.sms(10))
            try await eventually("job claimed by the first worker") { try await harness.ledger(id)?.0 == "running" }
            first.signal(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(5)) != nil)

            let second = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: slow)
            try await eventually(timeout: .seconds(30), "job completed by the second worker") { try await harness.ledger(id)?.0 == "completed" }
            let (_, attempts) = try #require(try await harness.ledger(id))
            #expect(attempts == 2)
            #expect(try await harness.outboxCount([id]) == 1)
            second.signal(SIGTERM)
            #expect(await second.waitForExit(timeout: .seconds(20)) == 0)
        }
    }

    @Test func sigtermDrainsInFlightJobsAndExitsZero() async throws {
        try await withHarness() { harness in
            // Each job stays at the (slow) outbox for 5 s: long enough for all ten to be claimed
            // and in flight together even under load (at 1.5 s the first ones had finished
            // before the last was claimed, so "ten running" never held).
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: ["HERALD_OUTBOX_DELAY_MS": "5000"])
            try await worker.waitUntilReady()
            var ids: [String] = []
            for n in 0..<10 { ids.append(try await harness.enqueue(harness.sms(20 + n))) }
            try await eventually("jobs in flight") { try await harness.statuses(ids).values.filter { $0 == "running" }.count == 10 }
            worker.signal(SIGTERM)
            let status = await worker.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "exit status \(String(describing: status)); log:\n\(worker.log.suffix(2000))")
            // Every in-flight job finished during the drain.
            let statuses = try await harness.statuses(ids)
            #expect(statuses.values.allSatisfy { $0 == "completed" }, "\(statuses)")
            #expect(try await harness.outboxCount(ids) == 10)
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
            #expect(worker.log.contains("draining in-flight jobs"))
        }
    }

    /// Past the drain timeout the runner cancels its handlers: each one stops where it is (here
    /// in the outbox provider's 8 s "latency", as a provider call would be cut), sends nothing,
    /// and its job is requeued. A handler that ran on would put its SMS in the outbox after the
    /// worker had given it up (before issue 31, every one of the five did, 8 s after it began).
    @Test func sigtermPastTheDrainTimeoutRequeuesAndAnotherWorkerFinishes() async throws {
        try await withHarness() { harness in
            let slow = ["HERALD_OUTBOX_DELAY_MS": "8000", "HERALD_RUNNER_DRAIN_TIMEOUT_SECONDS": "1"]
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: slow)
            try await worker.waitUntilReady()
            var ids: [String] = []
            for n in 0..<5 { ids.append(try await harness.enqueue(harness.sms(40 + n))) }
            try await eventually("jobs in flight") { try await harness.statuses(ids).values.filter { $0 == "running" }.count == 5 }
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
            #expect(try await harness.outboxCount(ids) == 0, "a cancelled handler sent its SMS; log:\n\(worker.log.suffix(2000))")
            let next = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: ["HERALD_OUTBOX_DELAY_MS": "10"])
            try await eventually(timeout: .seconds(30), "all completed by the next worker") {
                try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 5
            }
            #expect(try await harness.outboxCount(ids) == 5)
            for id in ids { #expect(try await harness.ledger(id)?.1 == 2, "\(id): not run again by the next worker") }
            await next.stop()
        }
    }

    @Test func theOperationsEndpointAndTheLogsOfARealWorker() async throws {
        try await withHarness() { harness in
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace)
            try await worker.waitUntilReady()
            let health = try await ChildProcess.run("/usr/bin/curl", ["-fs", "http://127.0.0.1:\(worker.port)/healthz"])
            #expect(health.contains("ok"))
            let phone = harness.phone(766)
            let id = try await harness.enqueue(SMSVerificationJob(verificationID: "\(harness.namespace)-ops", phoneNumber: phone))
            try await harness.client.publishRaw(body: Array("nope".utf8), routingKey: "sms.verification",
                                                properties: JobEnvelope(messageID: "ops-bad", typeName: SMSVerificationJob.typeName).properties())
            try await eventually("job completed") { try await harness.ledger(id)?.0 == "completed" }
            try await eventually("metrics counted both") {
                let metrics = try await ChildProcess.run("/usr/bin/curl", ["-fs", "http://127.0.0.1:\(worker.port)/metrics"])
                return metrics.contains(#"herald_jobs_total{queue="sms",type="sms.verification.v1",outcome="completed"} 1"#)
                    && metrics.contains(#"herald_dead_letters_total{queue="sms",category="invalid"} 1"#)
                    && metrics.contains("herald_job_duration_seconds_bucket")
            }
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
            // JSON lines, the number masked, never whole.
            let log = worker.log
            #expect(!log.contains(phone))
            #expect(!log.contains(String(phone.dropFirst())))
            #expect(log.contains(Redact.phone(phone)))
            let lines = log.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(!lines.isEmpty)
            for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)") }
        }
    }

    @Test func aWorkerWithABadConfigurationExitsWithTheConfigurationCode() async throws {
        try await withHarness() { harness in
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: ["HERALD_AMQP_PREFETCH": "many"])
            #expect(await worker.waitForExit(timeout: .seconds(10)) == 78)
            #expect(worker.log.contains("amqp.prefetch"))
        }
    }

    /// The tools stop as the workers do (issue 34): herald-bench without the HMAC keys died with a
    /// Swift fatal error and a backtrace ("Error raised at top level"); now one line naming the
    /// key, and exit 78. herald-chaos loads its configuration the same way (and herald-dev-apple,
    /// which hashes only in one command, without requiring the keys at start).
    @Test(arguments: ["herald-bench", "herald-chaos"])
    func aToolWithoutTheHMACKeysStopsWithOneLineAndTheConfigurationCode(tool: String) async throws {
        try await withHarness() { harness in
            let process = try WorkerProcess(tool, namespace: harness.namespace, unset: ["HERALD_SECRETS_HMAC_KEYS_FILE", "HERALD_SECRETS_HMAC_KEYS"])
            #expect(await process.waitForExit(timeout: .seconds(20)) == 78, "\(process.tail)")
            let lines = process.log.split(separator: "\n")
            #expect(lines.count == 1 && lines.first?.hasPrefix("\(tool): configuration key 'secrets.hmac_keys'") == true, "\(process.log)")
            #expect(!process.log.contains("Fatal error") && !process.log.contains("Backtrac"))
        }
    }

    /// A provider reached over http:// on a host other than loopback stops the worker at start
    /// (exit 78), naming the URL's key and the switch that would allow it; the secret stays out.
    @Test func aWorkerWithAClearTextProviderToARemoteHostDoesNotStart() async throws {
        try await withHarness() { harness in
            let secret = "whsec_" + Data((0..<24).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: [
                "HERALD_SMS_PROVIDERS": "webhook", "HERALD_SMS_WEBHOOK_URL": "http://sms-gateway.example.com/send",
                "HERALD_SMS_WEBHOOK_SECRET": secret,
            ])
            #expect(await worker.waitForExit(timeout: .seconds(10)) == 78)
            #expect(worker.log.contains("sms.webhook.url"))
            #expect(worker.log.contains("sms.allow_insecure_transport"))
            #expect(!worker.log.contains(secret))
        }
    }
}
