import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs

extension Chaos {
    /// Malformed messages of every sort mixed with valid jobs: all of them dead-lettered with a
    /// reason, no worker restarted, and what a malformed message costs Herald held to the floor
    /// of this machine, measured in the same run.
    ///
    /// Every run drains a backlog published while the workers are stopped: on this machine the
    /// harness, the broker and the fleet share two cores, and publishing live would time the
    /// harness's publishing as much as the workers.
    ///
    /// Herald's cost per malformed message and the floor's are measured alike, back to back:
    /// the malformed messages alone, drained by Herald's workers and by bare consumers
    /// (``PoisonFloor``), each timed by ``DeadLetterClock`` from the moment all consumers are on
    /// their queues to the moment every message is dead-lettered, in rounds, with the CPU each
    /// component spent inside each window beside them (broker, worker processes, the harness
    /// where the bare consumers run). The full run holds Herald, the median over the rounds of
    /// its ratio to the round's floor, to 1.25 times the floor (bare consumers that
    /// reject to the dead-letter exchange), and
    /// reports a second floor: bare consumers that do the least that keeps a reason and loses
    /// nothing (a confirmed copy with the reason, then the ack: AMQP 0-9-1 has no rejection
    /// that carries a reason, and a quorum queue dead-letters at most once).
    ///
    /// The mixed run (the malformed messages interleaved with valid jobs) then shows what they
    /// do to valid jobs: their throughput next to a clean run's, as a figure. (Timing Herald by
    /// the mixed run's extra seconds measured the valid jobs' noise more than the malformed
    /// messages: a malformed message costs a few hundredths of a valid job.)
    func poisonScenario() async throws -> ScenarioResult {
        let valid = options.poisonValid ?? options.jobs
        var result = ScenarioResult(name: "\(options.poison) malformed messages among \(valid) valid jobs")
        let start = ContinuousClock.now
        // Made before anything is timed: building them is the harness's work, not the fleet's.
        let malformed = (0..<options.poison).map { Poison.message($0, run: load.run, maxBytes: configuration.runner.maxMessageBytes) }
        let sent = malformed.count

        let alone = sent > 0 ? try await malformedAlone(malformed, into: &result) : nil
        let clean = try await backlog(valid: valid, malformed: [])
        let cleanSeconds = try await tally.span(clean.ids)
        let mixed = try await backlog(valid: valid, malformed: malformed)
        try await settle(&result, ids: mixed.ids)
        let mixedSeconds = try await tally.span(mixed.ids)
        let (cleanRate, mixedRate) = (Double(valid) / cleanSeconds, Double(valid) / mixedSeconds)
        result.require(fleet.pids == mixed.pids, "a worker was restarted during the poison run")

        let letters = try await collectDeadLetters(sent)
        result.deadLettered = letters.count
        result.deadLetterReasons = letters.reasons
        result.require(letters.count == sent, "\(letters.count) of \(sent) malformed messages dead-lettered")
        result.require(letters.withoutReason == 0, "\(letters.withoutReason) dead letters without a reason")
        result.notes.append(String(format: "valid jobs: %.0f/s clean, %.0f/s among the malformed ones (%.2f of the clean run)", cleanRate, mixedRate, mixedRate / cleanRate))
        if let alone { report(alone, validJobSeconds: cleanSeconds / Double(valid), into: &result) }
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    /// Every round's drains, then the medians and Herald's ratio to the floor: held to 1.25 in
    /// the full run, reported in the short one (inside make test, beside other load, 400
    /// messages, one round), whose floors' drains mostly end before every bare consumer is up
    /// or inside the shortest window.
    private func report(_ alone: Alone, validJobSeconds: Double, into result: inout ScenarioResult) {
        for (index, round) in alone.rounds.enumerated() {
            result.notes.append("malformed messages alone, round \(index + 1): rejected by bare consumers \(round.reject.summary), re-published with a reason \(round.republish.summary), Herald \(round.herald.summary)")
        }
        guard alone.rounds.allSatisfy({ [$0.reject, $0.republish, $0.herald].allSatisfy(\.timesTheDrain) }) else {
            result.notes.append("too few malformed messages inside the timing windows to compare (drains that ended before every consumer was up, or within \(DeadLetterClock.Measurement.minimumWindow))")
            if !options.short { result.require(false, "a poison drain's window did not time the drain (fewer than half its messages, or under \(DeadLetterClock.Measurement.minimumWindow))") }
            return
        }
        let (herald, reject, republish) = (alone.median(\.herald), alone.median(\.reject), alone.median(\.republish))
        let ratios = alone.rounds.map { $0.herald.perMessage / $0.reject.perMessage }
        let ratio = Alone.median(ratios)
        result.notes.append(String(format: "medians of %d rounds: %.0f µs each rejected to the dead-letter exchange by bare consumers (the floor), %.0f µs each re-published with a reason under a confirm and acked (%.2f× the floor)",
                                   alone.rounds.count, reject * 1e6, republish * 1e6, republish / reject))
        result.notes.append(String(format: "Herald: %.0f µs each (%.0f/s), %.2f× the re-publishing floor; a malformed message costs the time of %.3f valid jobs",
                                   herald * 1e6, 1 / herald, herald / republish, herald / validJobSeconds))
        result.notes.append("Herald against the floor of its round: " + ratios.map { String(format: "%.2f×", $0) }.joined(separator: ", ")
                            + String(format: "; median %.2f× (at most 1.25)", ratio))
        if !options.short { result.require(ratio <= 1.25, String(format: "a malformed message cost Herald %.2f× the floor of its round, the median of %d rounds (at most 1.25)", ratio, ratios.count)) }
    }

    /// One round of the malformed messages alone: each floor's drain and Herald's, back to back.
    struct AloneRound {
        var reject: DeadLetterClock.Measurement
        var republish: DeadLetterClock.Measurement
        var herald: DeadLetterClock.Measurement
    }

    /// The rounds of a run. Herald is judged by the median over the rounds of its ratio to the
    /// reject floor of the same round: the two drains of a round are seconds apart, so a ratio
    /// within a round cancels the machine's slower drift (other tenants, steal time) that a
    /// ratio of medians taken over minutes keeps, and the median leaves out a round in which
    /// one drain alone fell into a neighbour's burst.
    struct Alone {
        var rounds: [AloneRound]
        /// The median over the rounds of one drain's seconds per message.
        func median(_ drain: KeyPath<AloneRound, DeadLetterClock.Measurement>) -> Double {
            Self.median(rounds.map { $0[keyPath: drain].perMessage })
        }

        static func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
    }

    /// The malformed messages alone, drained by the floors' bare consumers and then by Herald's
    /// workers, back to back so that all three see the same machine; in rounds (five in the
    /// full run, one in the short), since on this shared machine one drain of a second or two
    /// can fall into another tenant's burst. Herald's dead letters must all carry a reason.
    private func malformedAlone(_ malformed: [Poison.Message], into result: inout ScenarioResult) async throws -> Alone {
        let clock = DeadLetterClock(connection: connection, topology: topology)
        var rounds: [AloneRound] = []
        for _ in 0..<(options.short ? 1 : 5) {
            let statuses = await fleet.drainAll()
            guard statuses.allSatisfy({ $0 == 0 }) else { throw ChaosFailure("workers did not drain and exit 0 before the poison run: \(statuses)") }
            let reject = try await floor(malformed, mode: .reject, clock: clock)
            let republish = try await floor(malformed, mode: .republish, clock: clock)
            let herald = try await heldDrain(malformed, clock: clock)
            let letters = try await collectDeadLetters(malformed.count)
            result.require(letters.count == malformed.count, "alone: \(letters.count) of \(malformed.count) malformed messages dead-lettered")
            result.require(letters.withoutReason == 0, "alone: \(letters.withoutReason) dead letters without a reason")
            rounds.append(AloneRound(reject: reject, republish: republish, herald: herald))
        }
        return Alone(rounds: rounds)
    }

    /// Herald's drain of the malformed messages, its workers let go together. Started on empty
    /// queues, every worker on its queue and ready, they are stopped (SIGSTOP), the backlog is
    /// published, and the window opens as they are all continued (SIGCONT). Started on the
    /// backlog instead, the seven processes came up over 0.4 s and the window, opening at the
    /// last of them, timed a drain already under way, and skewed: a queue whose only worker
    /// came up last still held its whole share while the others were half drained, and the
    /// tail that the window mostly timed cost more per message than a drain of all the queues
    /// at once. The bare consumers start together within the harness. The heartbeat is a
    /// minute for this start: the stopped workers answer none while the backlog is published
    /// (seconds), and the broker would close them after two missed beats of the scenario's
    /// short one. The next start (the next round, the clean backlog) is back on that one; on
    /// an error the fleet is started again on it here, since the scenarios after this one
    /// (the slow provider's) rely on the short heartbeat.
    private func heldDrain(_ malformed: [Poison.Message], clock: DeadLetterClock) async throws -> DeadLetterClock.Measurement {
        do {
            return try await heldDrainOnce(malformed, clock: clock)
        } catch {
            _ = await fleet.drainAll()
            try? fleet.startAll()
            throw error
        }
    }

    private func heldDrainOnce(_ malformed: [Poison.Message], clock: DeadLetterClock) async throws -> DeadLetterClock.Measurement {
        try fleet.startAll(overriding: ["HERALD_AMQP_HEARTBEAT_SECONDS": "60"])
        try await fleet.waitUntilReady(timeout: .seconds(60))
        try await clock.waitUntilConsuming(fleet.kinds, timeout: .seconds(60))
        fleet.signalAll(SIGSTOP)
        defer { fleet.signalAll(SIGCONT) }  // held no longer than this, whatever is thrown
        _ = await load.publish(0, among: malformed)
        let measurement = try await clock.measure(expected: malformed.count, consumers: fleet.kinds, workers: fleet.pids, timeout: options.drainTimeout) {
            fleet.signalAll(SIGCONT)
        }
        try await fleet.waitUntilReady(timeout: .seconds(60))
        return measurement
    }

    /// Takes the dead letters off their queues until `expected` have arrived (or two minutes
    /// pass): how many, by reason class, and how many had no reason.
    private func collectDeadLetters(_ expected: Int) async throws -> (count: Int, reasons: [String: Int], withoutReason: Int) {
        var letters = (count: 0, reasons: [String: Int](), withoutReason: 0)
        let deadline = ContinuousClock.now + .seconds(120)
        while letters.count < expected, ContinuousClock.now < deadline {
            let more = try await tally.drainDeadLetters(connection, topology: topology)
            letters.count += more.count
            letters.withoutReason += more.withoutReason
            letters.reasons.merge(more.reasons, uniquingKeysWith: +)
            if letters.count < expected { try await Task.sleep(for: .milliseconds(500)) }
        }
        return letters
    }

    /// A floor (``PoisonFloor``), with the workers stopped: publishes the malformed messages,
    /// has bare consumers settle them all as `mode` says, and empties the dead-letter queues of
    /// them again.
    private func floor(_ malformed: [Poison.Message], mode: PoisonFloor.Mode, clock: DeadLetterClock) async throws -> DeadLetterClock.Measurement {
        _ = await load.publish(0, among: malformed)
        let floor = PoisonFloor(broker: configuration.amqp, topology: topology, maxBodyBytes: configuration.runner.maxMessageBytes, mode: mode, logger: logger)
        let measurement = try await floor.drain(expected: malformed.count, consumers: fleet.kinds, timeout: options.drainTimeout, clock: clock)
        let letters = try await collectDeadLetters(malformed.count)
        guard letters.count == malformed.count else { throw ChaosFailure("\(letters.count) of the floor's \(malformed.count) messages reached a dead-letter queue") }
        return measurement
    }

    /// Stops the workers (a clean drain), publishes `valid` jobs with the
    /// malformed messages spread evenly among them, starts the workers and waits until the valid
    /// jobs are final. Returns the valid jobs' ids and the workers' pids while they ran.
    private func backlog(valid: Int, malformed: [Poison.Message]) async throws -> (ids: [String], pids: [pid_t]) {
        let statuses = await fleet.drainAll()
        guard statuses.allSatisfy({ $0 == 0 }) else { throw ChaosFailure("workers did not drain and exit 0 before the backlog: \(statuses)") }
        let ids = await load.publish(valid, among: malformed)
        try fleet.startAll()
        try await fleet.waitUntilReady(timeout: .seconds(60))
        let pids = fleet.pids
        _ = try await tally.waitUntilFinal(ids, timeout: options.drainTimeout)
        return (ids, pids)
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
    /// push secrets and link codes sent, nor the refresh tokens Apple issued, the client
    /// secrets herald-apple signed, or the lines of its `.p8` key and token keys.
    func securityScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "security: brute force, concurrent checks, secrets in logs, metrics and the database")
        let start = ContinuousClock.now
        let ids = await load.publish(4, kind: { _ in .sms })
        let others = await load.publish(8, kind: { $0 % 2 == 0 ? .push : .email })
        let appleJobs = await load.publish(4, kind: { _ in .apple })
        try await settle(&result, ids: ids + others + appleJobs)
        let verification = try HeraldVerification(database: tally.database, secrets: configuration.secrets)
        let codes = gateway.codes
        // Every refresh token the local Apple issued to the run's apple jobs (stored sealed by
        // herald-apple, revoked or not).
        let appleRefreshTokens = Set(load.published.filter { $0.value == .apple }.keys.flatMap {
            load.apple.endpoints.refreshTokens(of: AppleGateway.subject(for: $0)).map { $0.token }
        })

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
        // Push secrets and link codes (43 random characters) are searched anywhere, inside
        // longer tokens too. SMS codes are searched as runs of exactly their length of digits:
        // inside a longer run of digits (hex hashes, timestamps) a ten-digit window matches one
        // of tens of thousands of codes by chance (the full run found one such).
        let digitRuns: @Sendable (Set<String>, [String]) -> Set<String> = { codes, texts in
            codes.intersection(texts.reduce(into: Set<String>()) { $0.formUnion(SMSGateway.codes(in: $1, length: self.gateway.codeLength)) })
        }
        let searches: [(String, Set<String>, @Sendable (Set<String>, [String]) -> Set<String>)] = [
            ("SMS codes", Set(codes.values), digitRuns),
            ("push secrets", Set(apns.secrets.values), SecretSearch.found),
            ("link codes", Set(mail.codes.values), SecretSearch.found),
            ("Apple refresh tokens", appleRefreshTokens, SecretSearch.found),
            ("Apple client secrets", load.apple.endpoints.clientSecrets, SecretSearch.found),
            ("lines of the Apple .p8 key and token keys", load.apple.keyMaterial, SecretSearch.found),
        ]
        for (what, secrets, search) in searches {
            let leaks = search(secrets, texts)
            // The search must see what it looks for: every secret planted in a text is found.
            let planted = secrets.map { "x\($0)y" }.joined(separator: " ")
            result.require(search(secrets, [planted]) == secrets, "the search missed \(what) planted in a text")
            result.require(!secrets.isEmpty, "no \(what) to search: did any reach their server?")
            result.require(leaks.isEmpty, "\(leaks.count) of \(secrets.count) \(what) found in logs, metrics or the database dump")
            result.notes.append("\(secrets.count) \(what) searched: \(leaks.count) found")
        }
        result.notes.append("searched: \(logs.count / 1024) KiB of logs, \(metrics.count / 1024) KiB of metrics, a \(dump.count / 1024) KiB dump")
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }
}
