import Foundation
import HeraldClient
import HeraldPhone
import HeraldRuntime
import HeraldWire
import PostgresNIO

extension Chaos {
    /// SMS pumping against the shipped fraud guard, with fallback on (issue 46): a herald-sms of
    /// its own (another namespace; the guard and `sms.fallback.channels: [sms, whatsapp]`, every
    /// other setting the fleet's) takes a burst of requests for random mobiles under two Latvian
    /// prefixes, each from an IP of its own, while users of another region start verifications
    /// and check their codes, and numbers that verified a code before the burst ask again during
    /// the pause. Pass: the pumped SMS stop at the two prefixes' floors (plus a little in flight),
    /// no pumped WhatsApp goes out after its prefix was paused, no verification pays more than
    /// `sms.fallback.max_paid_sends`, every user's code arrives and verifies, every known number
    /// gets its code during the pause.
    func pumpingScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "pumping: two prefixes pumped from rotating IPs with fallback on; users and known numbers meanwhile")
        let start = ContinuousClock.now
        let pumpedCount = options.short ? 200 : 2000
        let (users, known) = (options.short ? 20 : 50, 3)
        let space = configuration.amqp.namespace + "pump"
        var environment = fleet.environment
        environment["HERALD_AMQP_NAMESPACE"] = space
        environment["HERALD_SMS_FRAUD_GUARD_ENABLED"] = "true"
        environment["HERALD_SMS_FALLBACK_CHANNELS"] = "sms,whatsapp"
        var amqp = configuration.amqp
        amqp.namespace = space
        let topology = HeraldTopology(amqp, configuration.runner)
        let client = try HeraldClient(configuration: amqp, logger: logger)
        try await client.connection.waitUntilConnected(timeout: .seconds(10))
        try await client.connection.declare(topology.all)
        let workers = try Fleet(counts: [(.sms, 1)], binDir: fleet.binDir, logDir: fleet.logDir + "/pumping", environment: environment,
                                basePort: (fleet.ports.max() ?? 19_200) + 30)
        func finish() async {
            await workers.stop()
            for queue in topology.all.queues + [.init(name: topology.waitQueue(.sms, seconds: 1))] { try? await client.connection.deleteQueue(queue.name) }
            for exchange in topology.all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
            await client.close()
        }
        do {
            try await workers.waitUntilReady(timeout: .seconds(60))
            try await pump(&result, client: client, pumpedCount: pumpedCount, users: users, known: known, floor: configuration.sms.fraudGuard.prefixFloor)
            let crashes = workers.unexpectedExits()
            result.require(crashes.isEmpty, "the pumping scenario's herald-sms exited on its own: \(crashes)")
        } catch {
            await finish()
            throw error
        }
        await finish()
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    private func pump(_ result: inout ScenarioResult, client: HeraldClient, pumpedCount: Int, users: Int, known: Int, floor: Int) async throws {
        let verification = try HeraldVerification(database: tally.database, secrets: configuration.secrets)
        let run = load.idPrefix + "pump-"
        // Two prefixes of `prefix_digits` (7) of their own: +3712 and three digits, then four.
        let first = Int.random(in: 100...898)
        let prefixes = ["+3712\(first)", "+3712\(first + 1)"]
        func number(_ prefix: String, _ n: Int) -> String { prefix + String(format: "%04d", n % 10_000) }
        let offset = Int.random(in: 0..<5_000)
        try await clearLatvia()

        // Known numbers: a code sent and verified under the first prefix before the burst.
        var knownNumbers: [String] = []
        for n in 0..<known {
            let id = "\(run)k\(n)"
            let phone = number(prefixes[0], 9_990 + n)
            try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: phone, locale: "en"), messageID: id)
            _ = try await tally.waitUntilFinal([id], timeout: .seconds(60))
            let code = try gateway.codes[id].orThrow("no code reached the known number \(id)")
            guard case .verified = try await verification.verifyPhone(verificationID: id, code: code, logger: logger) else {
                throw ChaosFailure("the known number's code \(id) did not verify")
            }
            knownNumbers.append(phone)
        }

        // The burst, a user of another region every tenth request, each request an IP of its own.
        var pumped: [String] = [], userIDs: [String] = []
        let total = pumpedCount + users
        let every = max(total / max(users, 1), 1)
        for n in 0..<total {
            let ip = "198.18.\(n / 250).\(n % 250 + 1)"
            if n % every == every - 1, userIDs.count < users {
                let id = "\(run)u\(userIDs.count)"
                let phone = "+447400" + String(format: "%06d", Int.random(in: 0..<1_000_000))
                try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: phone, locale: "en", client: .init(ip: ip)), messageID: id)
                userIDs.append(id)
            } else {
                let id = "\(run)p\(pumped.count)"
                let phone = number(prefixes[pumped.count % 2], offset + pumped.count / 2)
                try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: phone, locale: "en", client: .init(ip: ip)), messageID: id)
                pumped.append(id)
            }
        }
        let (statuses, _) = try await tally.waitUntilFinal(pumped + userIDs, timeout: options.drainTimeout)
        result.published = pumped.count + userIDs.count + known
        result.lost = (pumped + userIDs).filter { statuses[$0].map(Tally.final.contains) != true }.count
        result.require(result.lost == 0, "\(result.lost) request(s) not decided within \(options.drainTimeout)")
        // The fallbacks the first sends armed: their wait (sms.fallback.after_seconds.sms, 1 s) and their judgment.
        try await Task.sleep(for: .seconds(6))

        // The users: each code arrived and verifies.
        var usersVerified = 0
        for id in userIDs {
            guard let code = gateway.codes[id] else { continue }
            if case .verified = try await verification.verifyPhone(verificationID: id, code: code, logger: logger) { usersVerified += 1 }
        }
        // The known numbers ask again during the pause.
        var knownSent = 0
        for (n, phone) in knownNumbers.enumerated() {
            let id = "\(run)k\(n)-again"
            try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: phone, locale: "en"), messageID: id)
            _ = try await tally.waitUntilFinal([id], timeout: .seconds(60))
            if gateway.accepted[id] != nil { knownSent += 1 }
        }

        let sent = pumped.filter { gateway.accepted[$0] != nil }.count
        let figures = try await pumpedFigures(pumped)
        result.completed = sent + usersVerified + knownSent
        result.notes.append("\(pumped.count) pumped requests under \(prefixes.joined(separator: ", ")): \(sent) SMS sent, "
                            + "\(figures.whatsapp) WhatsApp sent (\(figures.whatsappAfterPause) after its prefix was paused), "
                            + "at most \(figures.maxPaid) paid send(s) per verification; paused: \(figures.paused.sorted().joined(separator: ", "))")
        result.notes.append("\(userIDs.count) users of GB meanwhile: \(usersVerified) codes received and verified; "
                            + "\(knownNumbers.count) known numbers during the pause: \(knownSent) sent")
        let slack = 10
        result.require(sent <= prefixes.count * floor + slack,
                       "\(sent) pumped SMS sent: more than the two prefixes' floors (\(prefixes.count) × \(floor)) and \(slack) in flight")
        result.require(Set(prefixes).isSubset(of: figures.paused), "not both prefixes paused: \(figures.paused.sorted())")
        result.require(figures.whatsappAfterPause == 0, "\(figures.whatsappAfterPause) pumped WhatsApp send(s) after their prefix was paused")
        let budget = configuration.sms.fallback.maxPaidSends
        result.require(figures.maxPaid <= budget, "a pumped verification paid \(figures.maxPaid) sends (sms.fallback.max_paid_sends: \(budget))")
        result.require(usersVerified == userIDs.count, "\(userIDs.count - usersVerified) user(s) of another region without a verified code")
        result.require(knownSent == knownNumbers.count, "\(knownNumbers.count - knownSent) known number(s) refused during the pause")
    }

    /// What the pumped verifications cost: WhatsApp sends (and those after their prefix's pause),
    /// the most accepted sends of one verification, and the prefixes paused.
    private func pumpedFigures(_ ids: [String]) async throws -> (whatsapp: Int, whatsappAfterPause: Int, maxPaid: Int, paused: Set<String>) {
        let rows = try await tally.database.query("""
            SELECT count(*) FILTER (WHERE a.provider = 'whatsapp')::int,
                   count(*) FILTER (WHERE a.provider = 'whatsapp' AND p.paused_at IS NOT NULL AND a.created_at > p.paused_at)::int,
                   coalesce((SELECT max(n) FROM (SELECT count(*)::int AS n FROM herald.sms_send_attempts
                                                  WHERE verification_id = ANY(\(ids)::text[]) AND result = 'accepted' GROUP BY verification_id) x), 0)
              FROM herald.sms_send_attempts a
              LEFT JOIN herald.sms_fraud_marks m ON m.verification_id = a.verification_id
              LEFT JOIN herald.sms_fraud_pauses p ON p.scope = 'prefix' AND p.key = m.prefix AND p.state = 'paused'
             WHERE a.verification_id = ANY(\(ids)::text[]) AND a.result = 'accepted'
            """, logger: logger)
        var figures = (whatsapp: 0, whatsappAfterPause: 0, maxPaid: 0, paused: Set<String>())
        for try await (whatsapp, after, most) in rows.decode((Int, Int, Int).self) { (figures.whatsapp, figures.whatsappAfterPause, figures.maxPaid) = (whatsapp, after, most) }
        let paused = try await tally.database.query("SELECT key FROM herald.sms_fraud_pauses WHERE scope = 'prefix' AND state = 'paused' AND key LIKE '+3712%'",
                                                    logger: logger)
        for try await key in paused.decode(String.self) { figures.paused.insert(key) }
        return figures
    }

    /// Latvia's guard state from earlier runs on this database (the scenario's region and prefixes).
    private func clearLatvia() async throws {
        try await tally.database.query("DELETE FROM herald.sms_fraud_counts WHERE (scope = 'region' AND key = 'LV') OR (scope = 'prefix' AND key LIKE '+3712%')", logger: logger)
        try await tally.database.query("DELETE FROM herald.sms_fraud_pauses WHERE (scope = 'region' AND key = 'LV') OR (scope = 'prefix' AND key LIKE '+3712%')", logger: logger)
        try await tally.database.query("DELETE FROM herald.sms_fraud_marks WHERE region = 'LV'", logger: logger)
        try await tally.database.query("DELETE FROM herald.sms_fraud_baselines WHERE (scope = 'region' AND key = 'LV') OR (scope = 'prefix' AND key LIKE '+3712%')",
                                       logger: logger)
    }
}
