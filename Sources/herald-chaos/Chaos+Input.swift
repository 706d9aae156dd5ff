import Foundation
import HeraldClient
import HeraldCore
import HeraldStubs

extension Chaos {
    /// Malformed messages of every sort mixed with valid jobs: all of them dead-lettered with a
    /// reason, no worker restarted, and the valid jobs' throughput next to a clean run of the
    /// same size measured just before.
    func poisonScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "\(options.poison) malformed messages among \(options.jobs / 2) valid jobs")
        let start = ContinuousClock.now
        let valid = options.jobs / 2
        let pids = fleet.pids

        var clock = ContinuousClock.now
        let clean = await load.publish(valid)
        _ = try await tally.waitUntilFinal(clean, timeout: options.drainTimeout)
        let cleanRate = Double(valid) / (ContinuousClock.now - clock).seconds

        // Made before the clock starts: building them is the harness's work, not the fleet's.
        let malformed = (0..<options.poison).map { Poison.message($0, run: load.run, maxBytes: configuration.runner.maxMessageBytes) }
        clock = ContinuousClock.now
        async let poisoned = load.publishPoison(malformed)
        let ids = await load.publish(valid)
        let sent = await poisoned
        try await settle(&result, ids: ids)
        let mixedRate = Double(valid) / (ContinuousClock.now - clock).seconds

        // Every malformed message reaches a dead-letter queue (the last ones may still be on their way).
        var letters = (count: 0, reasons: [String: Int](), withoutReason: 0)
        let deadline = ContinuousClock.now + .seconds(120)
        while letters.count < sent, ContinuousClock.now < deadline {
            let more = try await tally.drainDeadLetters(connection, topology: topology)
            letters.count += more.count
            letters.withoutReason += more.withoutReason
            letters.reasons.merge(more.reasons, uniquingKeysWith: +)
            if letters.count < sent { try await Task.sleep(for: .milliseconds(500)) }
        }
        result.deadLettered = letters.count
        result.deadLetterReasons = letters.reasons
        result.require(letters.count == sent, "\(letters.count) of \(sent) malformed messages dead-lettered")
        result.require(letters.withoutReason == 0, "\(letters.withoutReason) dead letters without a reason")
        result.require(fleet.pids == pids, "a worker was restarted during the poison run")
        let ratio = mixedRate / cleanRate
        result.notes.append(String(format: "valid jobs: %.0f/s clean, %.0f/s among the malformed ones: %.2f of the clean run", cleanRate, mixedRate, ratio))
        // A throughput figure is a measurement; the short run (inside make test, beside other
        // load) reports it, the full run holds it to the 90%.
        if !options.short { result.require(ratio >= 0.9, String(format: "valid-job throughput %.2f of the clean run (at least 0.90)", ratio)) }
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    /// The provider answers after three heartbeats: the handlers block that long, and the
    /// workers' broker connections must stay up (their /readyz never drops).
    func slowScenario() async throws -> ScenarioResult {
        let delay = Duration.seconds(3 * options.heartbeatSeconds + 1)
        var result = ScenarioResult(name: "slow provider: every SMS answered after \(delay)")
        let start = ContinuousClock.now
        gateway.set(.slow(delay))
        let count = options.short ? 40 : 200
        let publishing = Task { await load.publish(count, kind: { _ in .sms }) }
        var dropped: Set<String> = []
        let watchUntil = ContinuousClock.now + delay * 3
        while ContinuousClock.now < watchUntil {
            for (name, ready) in await fleet.readiness() where !ready { dropped.insert(name) }
            try await Task.sleep(for: .milliseconds(250))
        }
        gateway.set(.normal)
        let ids = await publishing.value
        try await settle(&result, ids: ids)
        result.require(dropped.isEmpty, "workers not ready while their handlers waited on the provider: \(dropped.sorted())")
        result.require(result.duplicateSends == 0, "\(result.duplicateSends) duplicated sends")
        result.notes.append("no worker's /readyz dropped while \(count) handlers waited \(delay) each")
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    /// Brute force stops at the attempt limit; 100 concurrent checks of the right code give one
    /// success; the logs, the metrics and a dump of the database hold none of the SMS codes,
    /// push secrets and link codes sent.
    func securityScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "security: brute force, concurrent checks, secrets in logs, metrics and the database")
        let start = ContinuousClock.now
        let ids = await load.publish(4, kind: { _ in .sms })
        let others = await load.publish(8, kind: { $0 % 2 == 0 ? .push : .email })
        try await settle(&result, ids: ids + others)
        let verification = try HeraldVerification(database: tally.database, secrets: configuration.secrets)
        let codes = gateway.codes

        // Brute force: wrong codes until the limit, then even the right code is refused.
        let target = ids[0]
        let right = try codes[target].orThrow("no code received for \(target)")
        var wrongAccepted = 0
        var tries = 0
        for guess in 0..<(configuration.sms.maxAttempts + 5) {
            let wrong = String(format: "%0\(gateway.codeLength)d", guess)
            guard wrong != right else { continue }
            tries += 1
            if case .verified = try await verification.verifyPhone(verificationID: target, code: wrong, logger: logger) { wrongAccepted += 1 }
        }
        let after = try await verification.verifyPhone(verificationID: target, code: right, logger: logger)
        result.require(wrongAccepted == 0, "a wrong code was accepted")
        var stillVerifies = false
        if case .verified = after { stillVerifies = true }
        result.require(!stillVerifies, "the right code still worked after \(tries) wrong tries (limit \(configuration.sms.maxAttempts))")
        result.notes.append("brute force: \(tries) wrong codes refused, then the right one answered \(after)")

        // 100 concurrent checks of the right code: exactly one success.
        let raced = ids[1]
        let code = try codes[raced].orThrow("no code received for \(raced)")
        let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    if case .verified = try await verification.verifyPhone(verificationID: raced, code: code, logger: self.logger) { return true }
                    return false
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        result.require(successes == 1, "\(successes) of 100 concurrent checks of the right code succeeded")
        result.notes.append("100 concurrent checks of the right code: \(successes) success")

        // Secrets: every code the gateway received, in the workers' logs, metrics and a dump.
        let logs = fleet.logFiles.compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.joined(separator: "\n")
        let metrics = await fleet.metrics()
        let dump = try await ChildProcess.run("/usr/bin/pg_dump", ["--data-only", "--schema=herald", "--dbname=\(configuration.database.url)"], timeout: .seconds(120))
        let texts = [logs, metrics, dump]
        result.require(!logs.isEmpty && !dump.isEmpty, "nothing to search: \(logs.count) bytes of logs, \(dump.count) bytes of dump")
        for (what, secrets) in [("SMS codes", Set(codes.values)), ("push secrets", Set(apns.secrets.values)), ("link codes", Set(mail.codes.values))] {
            let leaks = SecretSearch.found(secrets, in: texts)
            // The search must see what it looks for: every secret planted inside longer text is found.
            let planted = secrets.map { "x\($0)9" }.joined(separator: " ")
            result.require(SecretSearch.found(secrets, in: [planted]) == secrets, "the search missed \(what) planted in a text")
            result.require(!secrets.isEmpty, "no \(what) to search: did any reach their server?")
            result.require(leaks.isEmpty, "\(leaks.count) of \(secrets.count) \(what) found in logs, metrics or the database dump")
            result.notes.append("\(secrets.count) \(what) searched: \(leaks.count) found")
        }
        result.notes.append("searched: \(logs.count / 1024) KiB of logs, \(metrics.count / 1024) KiB of metrics, a \(dump.count / 1024) KiB dump")
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }
}
