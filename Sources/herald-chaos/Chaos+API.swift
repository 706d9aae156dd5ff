import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

extension Chaos {
    /// HTTP clients start SMS verifications through herald-api (`POST /v1/sms/verifications`, a
    /// server key, one `client_ip` each) and retry each start with its own id until it is
    /// answered, while herald-api is SIGKILLed and started again, RabbitMQ is stopped, paused
    /// (SIGSTOP) and blocked (its memory alarm), and PostgreSQL is stopped. At the SMS gateway:
    /// every start answered 2xx is sent exactly once; every start whose last answer was not 2xx
    /// (a refusal, or no answer before the clients gave up) is sent never. herald-api's peak
    /// resident memory is read from each of its processes before it ends.
    func apiScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "herald-api: retrying clients; herald-api killed, the broker stopped, paused and blocked, PostgreSQL stopped")
        let start = ContinuousClock.now
        let door = try await APIDoor(binDir: fleet.binDir, logDir: fleet.logDir, environment: fleet.environment, port: (fleet.ports.max() ?? 19_200) + 10)
        try await door.waitUntilReady(timeout: .seconds(30))
        // New starts at a steady pace while the faults last; every unanswered one retried about
        // three times a second by its client (the full run: 200 clients, some 600 requests/s in an outage).
        let clients = options.short ? 40 : 200
        let starts = APIStarts(prefix: load.idPrefix + "api-", perSecond: options.short ? 15 : 60)
        let load = self.load
        let running = Task { await starts.run(clients: clients, door: door) { load.number($0 + 500_000) } }

        // The faults, one after the other, each once the fleet and herald-api are back.
        let kills = options.short ? 3 : 10
        for _ in 0..<kills {
            try await Task.sleep(for: options.killInterval)
            try door.killAndRestart()
            result.kills += 1
        }
        try await door.waitUntilReady(timeout: .seconds(30))
        let outage = options.short ? Duration.seconds(6) : options.providerOutage
        try await services("stop-rabbitmq")
        try await Task.sleep(for: outage)
        try await services("start-rabbitmq")
        try await back(door)
        try await services("pause-rabbitmq")
        try await Task.sleep(for: .seconds(3 * options.heartbeatSeconds + 2))
        try await services("resume-rabbitmq")
        try await back(door)
        // A memory alarm: RabbitMQ blocks every publishing connection (connection.blocked) until it clears.
        try await services("rabbitmqctl", "set_vm_memory_high_watermark", "0.000001")
        try await Task.sleep(for: outage)
        // Back to scripts/services.sh's vm_memory_high_watermark.relative.
        try await services("rabbitmqctl", "set_vm_memory_high_watermark", "0.3")
        try await back(door)
        try await services("stop-postgres", "immediate")
        try await Task.sleep(for: options.short ? .seconds(6) : options.databaseOutage)
        try await services("start-postgres")
        try await back(door)
        let recovered = ContinuousClock.now

        // No new starts; the clients give up a while after the last fault, and every start has its last answer.
        starts.finish(givingUpAt: .now + .seconds(options.short ? 30 : 60))
        await running.value
        await door.stop()
        let answers = starts.answers
        let yes = Set(answers.filter { $0.value.accepted }.keys)
        let no = Set(answers.keys).subtracting(yes)
        // Every yes sent once (drained), then a quiet spell in which a late send would show.
        let deadline = ContinuousClock.now + options.drainTimeout
        while ContinuousClock.now < deadline, !yes.allSatisfy({ gateway.accepted[$0] != nil }) { try await Task.sleep(for: .milliseconds(500)) }
        result.recoverySeconds = (ContinuousClock.now - recovered).seconds
        try await Task.sleep(for: .seconds(5))
        let sends = gateway.accepted
        result.published = answers.count
        result.completed = yes.count
        let lost = yes.filter { sends[$0] == nil }
        result.lost = lost.count
        // A repeat is possible without a kill: PostgreSQL stopped between the gateway's answer and
        // herald-sms's commit leaves the send `sending`, and the redelivered job sends a fresh code.
        // As in every scenario (``settle``), each repeat must be counted as uncertain in its record.
        let duplicated = answers.keys.filter { (sends[$0] ?? 0) > 1 }
        let uncertain = try await tally.uncertainSends(duplicated)
        result.duplicates = duplicated.sorted().map {
            DuplicateSend(channel: .sms, messageID: $0, provider: "webhook", sends: sends[$0] ?? 0, uncertainRecorded: uncertain[$0] ?? 0)
        }
        let sentAfterRefusal = no.filter { sends[$0] != nil }
        result.sentAfterRefusal = sentAfterRefusal.count
        let statuses = Dictionary(answers.values.map { ($0.last.map(String.init) ?? "none", 1) }, uniquingKeysWith: +)
        func counts(_ byStatus: [String: Int]) -> String { byStatus.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ") }
        result.notes.append("\(answers.count) starts by \(clients) clients (one start in four takes a 5xx as final), \(starts.requests) requests answered "
                            + "\(counts(starts.seen)); last answers: \(counts(statuses))")
        result.notes.append("\(yes.count) answered 2xx: \(lost.count) never sent, \(duplicated.count) sent more than once (\(result.hiddenDuplicateSends) repeats not counted as uncertain); "
                            + "\(no.count) never answered 2xx: \(sentAfterRefusal.count) sent")
        result.notes.append(String(format: "herald-api peak RSS (VmHWM) %.1f MB across %d starts of it", door.peakResidentMB, result.kills + 1))
        result.require(lost.isEmpty, "\(lost.count) start(s) answered 2xx never sent: \(lost.sorted().prefix(5))")
        let hidden = result.duplicates.filter { !$0.counted }
        result.require(hidden.isEmpty, "\(result.hiddenDuplicateSends) repeated send(s) not counted as uncertain in their record: " + hidden.map(\.line).joined(separator: "; "))
        result.require(sentAfterRefusal.isEmpty, "\(sentAfterRefusal.count) start(s) sent though no answer to them was 2xx: \(sentAfterRefusal.sorted().prefix(5))")
        result.require(yes.count >= answers.count / 2, "only \(yes.count) of \(answers.count) starts were ever answered 2xx")
        result.require(door.peakResidentMB * 1_000_000 < Double(256 << 20), String(format: "herald-api grew to %.0f MB", door.peakResidentMB))
        result.seconds = (ContinuousClock.now - start).seconds
        return result
    }

    /// After a fault: herald-api and every worker ready again.
    private func back(_ door: APIDoor) async throws {
        try await door.waitUntilReady(timeout: .seconds(60))
        try await fleet.waitUntilReady(timeout: .seconds(60))
    }
}

/// The `api` scenario's starts: new ids at a steady pace until ``finish(givingUpAt:)``, each
/// retried by its client while it gets no answer (and, three clients in four, a 5xx), until the
/// clients give up.
final class APIStarts: Sendable {
    struct Answers: Sendable {
        /// The last status (nil: no answer: refused connection, reset, timeout).
        var last: Int?
        /// Some answer was 2xx: the start must be sent once.
        var accepted = false
    }

    struct State {
        var next = 0
        var answers: [String: Answers] = [:]
        var requests = 0
        var finished = false
        var giveUp: ContinuousClock.Instant?
        /// Every answer of every request, by status ("none": no answer).
        var seen: [String: Int] = [:]
    }

    let prefix: String
    let interval: Duration
    let begin = ContinuousClock.now
    private let state = NIOLockedValueBox(State())

    init(prefix: String, perSecond: Double) {
        self.prefix = prefix
        interval = .seconds(1 / perSecond)
    }

    var answers: [String: Answers] { state.withLockedValue { $0.answers } }
    var requests: Int { state.withLockedValue { $0.requests } }
    var seen: [String: Int] { state.withLockedValue { $0.seen } }

    /// No new start from now; a start not answered yet is tried until `instant`.
    func finish(givingUpAt instant: ContinuousClock.Instant) {
        state.withLockedValue { $0.finished = true; $0.giveUp = instant }
    }

    /// `clients` at once, each taking the next start when it is due: start n goes to number
    /// `number(n)` from client address 10.x.y.z (one per start: no per-IP limit is reached).
    func run(clients: Int, door: APIDoor, number: @escaping @Sendable (Int) -> String) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    while let n = self.take() {
                        try? await Task.sleep(until: self.begin + self.interval * n, clock: .continuous)
                        await self.drive(self.prefix + String(n), door: door, phone: number(n), clientIP: "10.\(n >> 16 & 255).\(n >> 8 & 255).\(n & 255)",
                                         patient: n % 4 != 0)
                    }
                }
            }
        }
    }

    private func take() -> Int? {
        state.withLockedValue { state in
            guard !state.finished else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    /// A patient client retries a 5xx as it retries no answer; an impatient one (a user who walks
    /// away) takes any answer as final, so a 5xx that anything sent later is seen.
    private func drive(_ id: String, door: APIDoor, phone: String, clientIP: String, patient: Bool) async {
        while true {
            let status = await door.start(verificationID: id, phone: phone, clientIP: clientIP)
            let done = state.withLockedValue { state -> Bool in
                state.requests += 1
                state.seen[status.map(String.init) ?? "none", default: 0] += 1
                var answers = state.answers[id] ?? Answers()
                answers.last = status
                if let status, (200..<300).contains(status) { answers.accepted = true }
                state.answers[id] = answers
                if let status, status < 500 || !patient { return true }
                return state.giveUp.map { ContinuousClock.now >= $0 } ?? false
            }
            if done { return }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 200...400)))
        }
    }
}
