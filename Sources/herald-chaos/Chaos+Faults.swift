import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
#if canImport(Glibc)
import Glibc
#endif

extension Chaos {
    /// Mixed jobs, apple jobs among them, while a random worker gets SIGKILL every few seconds
    /// and is started again. Lost must be 0. A kill repeats the sends its worker had made but not yet committed (no
    /// SMS gateway, SMTP server or APNs takes an idempotency key): each such repeat must be
    /// counted as uncertain in its record (``settle``), and there can be no more of them than
    /// the killed workers had jobs in flight (`amqp.prefetch` each). An apple job killed while
    /// Apple had its code ends uncertain rather than sending the code again; those count
    /// against the same bound, and no code may reach Apple twice (``accountApple``).
    func killScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "kill -9 a random worker every \(options.killInterval)")
        let start = ContinuousClock.now
        // One kill per 200 jobs (at least 3); the jobs are paced to span all the kills.
        let kills = max(3, options.jobs / 200)
        let span = options.killInterval * (kills + 1)
        // One SMS job in twenty with a fallback to WhatsApp: kills land between its decisions and its sends too.
        load.withFallbacks(true)
        defer { load.withFallbacks(false) }
        let publishing = Task { await load.publish(options.jobs, perSecond: Double(options.jobs) / span.seconds, kind: Load.mixedWithApple) }
        var lastKill = start
        var killed: [String: Int] = [:]
        for _ in 0..<kills {
            try await Task.sleep(for: options.killInterval)
            killed[try fleet.killRandomAndRestart(), default: 0] += 1
            result.kills += 1
            lastKill = .now
        }
        let ids = await publishing.value
        result.notes.append("killed: " + killed.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))
        try await settle(&result, ids: ids, recoveryFrom: lastKill)
        let duplicatedFallbacks = try await accountFallbacks(&result, ids: Set(ids))
        let inFlight = result.kills * configuration.amqp.prefetch
        result.require(result.duplicateSends + result.appleUncertain + duplicatedFallbacks <= inFlight,
                       "\(result.duplicateSends) duplicated sends, \(duplicatedFallbacks) duplicated fallbacks and \(result.appleUncertain) uncertain apple jobs for \(result.kills) kills: more than the \(inFlight) jobs they had in flight")
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    /// Every fallback verification of `ids` reached WhatsApp (no channel skipped, whatever was
    /// killed between the decision and the send); returns how many WhatsApp messages came more
    /// than once for one verification (each must be a send Herald knows it may have made twice).
    func accountFallbacks(_ result: inout ScenarioResult, ids: Set<String>) async throws -> Int {
        let numbers = load.fallbackNumbers.filter { ids.contains($0.key) }
        let deadline = ContinuousClock.now + options.drainTimeout
        var reached: [String: Int] = [:]
        var capped: Set<String> = []
        var missing: [String: String] = [:]
        repeat {
            reached = Dictionary(whatsapp.messages.map { ("+" + $0.to, 1) }, uniquingKeysWith: +)
            capped = try await refusedAfterUncertainSend(numbers.filter { reached[$0.value] == nil }.map(\.key))
            missing = numbers.filter { reached[$0.value] == nil && !capped.contains($0.key) }
            if missing.isEmpty { break }
            try await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < deadline
        let duplicated = numbers.values.reduce(0) { $0 + max(0, (reached[$1] ?? 0) - 1) }
        result.notes.append("fallbacks: \(numbers.count) verifications [sms, whatsapp], \(numbers.count - missing.count - capped.count) reached WhatsApp, "
            + "\(capped.count) refused by sms.fallback.max_paid_sends after an uncertain send, \(duplicated) more than once")
        result.require(!numbers.isEmpty, "no fallback verification was published")
        result.require(missing.isEmpty, "\(missing.count) fallback verifications never reached WhatsApp (a channel skipped): \(missing.keys.sorted().prefix(5))")
        return duplicated
    }

    /// Of `ids`, the verifications whose fallback the paid-sends limit refused because a kill
    /// left an SMS uncertain: the retry sent a fresh code, the uncertain one counts as paid
    /// (issue 46: cost is a limit), so the next channel would exceed `sms.fallback.max_paid_sends`.
    /// Herald's record says so (`fallback_refused:rate_limited:paid_sends`, `uncertain_sends`):
    /// a refusal recorded, not a channel skipped.
    func refusedAfterUncertainSend(_ ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        let rows = try await tally.database.query("""
            SELECT verification_id FROM herald.sms_verifications
             WHERE verification_id = ANY(\(ids)::text[]) AND reason = 'fallback_refused:rate_limited:paid_sends' AND uncertain_sends > 0
            """, logger: logger)
        var refused: Set<String> = []
        for try await id in rows.decode(String.self) { refused.insert(id) }
        return refused
    }

    /// The shape of the fault scenarios: `count` jobs paced over `span`, the fault started
    /// `lead` into it. `fault` returns when the fault is over: recovery is measured from
    /// there, and every job must then finish.
    @discardableResult
    func underLoad(_ result: inout ScenarioResult, count: Int, span: Duration, lead: Duration = .seconds(2), kind: @escaping @Sendable (Int) -> JobKind = Load.mixed,
                           over: String, fault: (inout ScenarioResult) async throws -> Void) async throws -> [String] {
        let start = ContinuousClock.now
        let publishing = Task { await load.publish(count, perSecond: Double(count) / span.seconds, kind: kind) }
        try await Task.sleep(for: lead)
        try await fault(&result)
        let recovered = ContinuousClock.now
        result.notes.append("\(await unfinished()) jobs unfinished when \(over)")
        let ids = await publishing.value
        try await settle(&result, ids: ids, recoveryFrom: recovered)
        result.seconds = (ContinuousClock.now - start).seconds
        return ids
    }

    /// RabbitMQ restarted mid-run, then paused (SIGSTOP) for three heartbeats: every worker
    /// must notice within two heartbeats and reconnect by itself; confirmed jobs are not lost.
    func brokerScenario() async throws -> ScenarioResult {
        let pause = Duration.seconds(3 * options.heartbeatSeconds + 2)
        var result = ScenarioResult(name: "RabbitMQ restarted, then paused \(pause)")
        // Paced over the restart (about 10 s) and the pause; failed publishes are tried again.
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(16) + pause, over: "the broker resumed") { result in
            try await services("restart-rabbitmq")
            let restarted = ContinuousClock.now
            try await fleet.waitUntilReady(timeout: .seconds(60))
            result.notes.append(String(format: "after the restart, all workers ready again in %.1f s", (ContinuousClock.now - restarted).seconds))

            try await services("pause-rabbitmq")
            let paused = ContinuousClock.now
            var noticed: [String: Double] = [:]
            while ContinuousClock.now - paused < pause {
                for (name, ready) in await fleet.readiness() where !ready && noticed[name] == nil {
                    noticed[name] = (ContinuousClock.now - paused).seconds
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await services("resume-rabbitmq")
            let resumed = ContinuousClock.now
            try await fleet.waitUntilReady(timeout: .seconds(60))
            let slowest = noticed.values.max() ?? .infinity
            let limit = Double(2 * options.heartbeatSeconds) + 1
            result.notes.append(String(format: "paused: %d of %d workers noticed, the last after %.1f s (two heartbeats: %d s); ready again %.1f s after SIGCONT",
                                       noticed.count, fleet.names.count, slowest, 2 * options.heartbeatSeconds, (ContinuousClock.now - resumed).seconds))
            result.require(noticed.count == fleet.names.count, "workers that never noticed the paused broker: \(Set(fleet.names).subtracting(noticed.keys).sorted())")
            result.require(slowest <= limit, String(format: "a worker took %.1f s to notice the paused broker (limit %.0f s)", slowest, limit))
        }
        return result
    }

    /// PostgreSQL stopped (`immediate`) mid-run and started again: no job acked or
    /// dead-lettered because of it; the backlog drains after.
    func databaseScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "PostgreSQL stopped (immediate) for \(options.databaseOutage)")
        try await underLoad(&result, count: options.jobs / 2, span: options.databaseOutage + .seconds(6), over: "PostgreSQL came back") { _ in
            try await services("stop-postgres", "immediate")
            try await Task.sleep(for: options.databaseOutage)
            try await services("start-postgres")
        }
        return result
    }

    /// The providers refuse for half the outage and hang for the other half: the SMS gateway
    /// 503, APNs 503, the SMTP server 451, Apple's token and revoke endpoints 503, then none of
    /// them answers. Retries back off
    /// (attempts per SMS job stay within the runner's limit), and every job completes once
    /// they recover: every apple job exchanged its code once (and revoked once), none uncertain.
    func providerScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "providers (SMS, SMTP, APNs, Apple) refusing, then hanging, for \(options.providerOutage)")
        let count = max(100, options.jobs / 4)
        var (outageStart, outageEnd) = (Date(), Date())
        // Paced over the outage and a little after, so jobs arrive before, during and after it.
        let ids = try await underLoad(&result, count: count, span: options.providerOutage + .seconds(4), lead: .seconds(1),
                                      kind: { [.push, .email, .sms, .sms, .apple][$0 % 5] }, over: "the providers recovered") { _ in
            outageStart = Date()
            gateway.set(.failing)
            apns.set(.failing)
            try mail.set(.refusing)
            load.apple.set(outage: .status(503))
            try await Task.sleep(for: options.providerOutage / 2)
            gateway.set(.hanging)
            apns.set(.hanging(options.providerOutage))
            try mail.set(.hanging)
            load.apple.set(outage: .hang)
            try await Task.sleep(for: options.providerOutage / 2)
            gateway.set(.normal)
            apns.set(.normal)
            try mail.set(.normal)
            load.apple.set(outage: nil)
            outageEnd = Date()
        }
        let rate = gateway.requestRate(from: outageStart, to: outageEnd)
        let requests = gateway.requests
        let attempts = ids.compactMap { requests[$0] }
        let maxAttempts = attempts.max() ?? 0
        result.notes.append(String(format: "SMS gateway during the outage: %.0f requests/s on average, %d at peak; attempts per SMS job: at most %d, %.1f on average",
                                   rate.mean, rate.peak, maxAttempts, Double(attempts.reduce(0, +)) / Double(max(attempts.count, 1))))
        result.require(maxAttempts <= configuration.runner.maxAttempts, "a job reached the provider \(maxAttempts) times (runner.max_attempts \(configuration.runner.maxAttempts)): a retry storm")
        result.require(result.duplicateSends == 0, "\(result.duplicateSends) duplicated sends")
        result.require(result.appleUncertain == 0, "\(result.appleUncertain) apple jobs ended uncertain with no worker killed")
        return result
    }

    /// Every worker gets SIGTERM while busy and is started again: nothing lost, nothing sent twice.
    func rolloutScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "rollout: SIGTERM every worker while busy, start again")
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(10), lead: .seconds(3), over: "the workers started again") { result in
            let statuses = await fleet.drainAll()
            try fleet.startAll()
            let restarted = ContinuousClock.now
            result.require(statuses.allSatisfy { $0 == 0 }, "workers did not drain and exit 0 on SIGTERM: \(statuses)")
            try await fleet.waitUntilReady(timeout: .seconds(60))
            result.notes.append(String(format: "%d workers drained and exited 0; all ready again in %.1f s", statuses.filter { $0 == 0 }.count, (ContinuousClock.now - restarted).seconds))
        }
        result.require(result.duplicateSends == 0, "\(result.duplicateSends) duplicated sends")
        return result
    }
}
