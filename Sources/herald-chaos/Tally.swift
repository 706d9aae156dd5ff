import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import Logging
import PostgresNIO

/// One scenario's figures, as the report shows them.
struct ScenarioResult: Sendable {
    var name: String
    var published = 0
    var completed = 0
    var lost = 0
    /// Valid jobs dead-lettered or recorded as failed: none is expected in any scenario.
    var failed = 0
    var deadLettered = 0
    var deadLetterReasons: [String: Int] = [:]
    /// Every job a provider accepted more than once, with what Herald's record says of it.
    var duplicates: [DuplicateSend] = []
    /// Repeated sends (a job accepted three times counts two).
    var duplicateSends: Int { duplicates.reduce(0) { $0 + $1.repeats } }
    /// Duplicated sends that the job's record does not count as uncertain: a repeat nobody
    /// could see in `heraldctl verify show-*`. None is allowed in any scenario.
    var hiddenDuplicateSends: Int { duplicates.reduce(0) { $0 + $1.hidden } }
    var missingSends = 0
    /// Sends of a start whose last answer was not a yes (the `api` scenario: a refusal, a 5xx or no answer).
    var sentAfterRefusal = 0
    /// Apple jobs whose authorization code reached Apple more than once (never allowed).
    var duplicatedExchanges = 0
    /// Apple jobs rejected as uncertain: a worker killed while Apple had the code, and the
    /// redelivery not sending it again (``Chaos/accountApple(_:ids:statuses:)``).
    var appleUncertain = 0
    var kills = 0
    var recoverySeconds: Double?
    var seconds: Double = 0
    var notes: [String] = []
    var failures: [String] = []
    var passed: Bool { failures.isEmpty }

    mutating func require(_ condition: Bool, _ failure: String) {
        if !condition { failures.append(failure) }
    }
}

/// A job whose send a provider accepted more than once (a crash between the provider's
/// acceptance and the commit repeats it), and whether Herald's record of the job (an SMS
/// verification, email request or push receipt: its `uncertain_sends`) counted the repeats.
struct DuplicateSend: Sendable {
    var channel: JobKind
    /// The job's message id (also its verification id, request id or receipt in this harness).
    var messageID: String
    /// Herald's name of the provider that accepted it twice: `webhook`, `smtp` or `apns`.
    var provider: String
    /// How many times the provider accepted it.
    var sends: Int
    /// The record's `uncertain_sends`: sends whose outcome the worker could not commit.
    var uncertainRecorded: Int

    var repeats: Int { sends - 1 }
    /// Repeats beyond what the record counts as uncertain.
    var hidden: Int { max(0, repeats - uncertainRecorded) }
    /// Herald knew: every repeat is counted as uncertain in the record.
    var counted: Bool { hidden == 0 }

    var line: String {
        "\(channel.rawValue) job \(messageID) via \(provider): sent \(sends) times, \(uncertainRecorded) uncertain in its record: "
            + (counted ? "counted" : "NOT counted")
    }

    var json: [String: Any] {
        ["channel": channel.rawValue, "message_id": messageID, "provider": provider, "sends": sends,
         "uncertain_sends": uncertainRecorded, "counted_as_uncertain": counted]
    }
}

/// What a provider the fleet sends to accepted, per job: Herald's name for it and its counts.
struct ProviderCounts: Sendable {
    var provider: String
    var accepted: [String: Int]
}

/// Reads the outcome of published jobs: the ledger (`herald.job_runs`) for what the workers
/// finished, the SMS gateway for what reached a phone, the dead-letter queues for the rest.
struct Tally: Sendable {
    let database: PostgresClient
    let logger: Logger

    /// message_id → ledger status, for the ids given.
    func statuses(_ ids: [String]) async throws -> [String: String] {
        var out: [String: String] = [:]
        for chunk in stride(from: 0, to: ids.count, by: 5000).map({ Array(ids[$0..<min($0 + 5000, ids.count)]) }) {
            let rows = try await database.query("SELECT message_id, status FROM herald.job_runs WHERE message_id = ANY(\(chunk)::text[])", logger: logger)
            for try await (id, status) in rows.decode((String, String).self) { out[id] = status }
        }
        return out
    }

    static let final: Set<String> = ["completed", "rejected", "dead"]

    /// id → the uncertain sends its record counts (SMS verification, email request, push
    /// receipt: each is the message id in this harness), for the ids that have any.
    func uncertainSends(_ ids: [String]) async throws -> [String: Int] {
        let rows = try await database.query("""
            SELECT verification_id, uncertain_sends FROM herald.sms_verifications WHERE verification_id = ANY(\(ids)::text[]) AND uncertain_sends > 0
            UNION ALL SELECT request_id, uncertain_sends FROM herald.email_requests WHERE request_id = ANY(\(ids)::text[]) AND uncertain_sends > 0
            UNION ALL SELECT receipt, uncertain_sends FROM herald.push_verifications WHERE receipt = ANY(\(ids)::text[]) AND uncertain_sends > 0
            """, logger: logger)
        var out: [String: Int] = [:]
        for try await (id, count) in rows.decode((String, Int).self) { out[id] = count }
        return out
    }

    /// What herald-apple recorded of apple jobs (`herald.apple_jobs`, one row per message id):
    /// id → (state, uncertain calls, error), for the ids that have a row.
    func appleRecords(_ ids: [String]) async throws -> [String: AppleRecord] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await database.query("""
            SELECT message_id, state, uncertain_calls, coalesce(error, '') FROM herald.apple_jobs WHERE message_id = ANY(\(ids)::text[])
            """, logger: logger)
        var out: [String: AppleRecord] = [:]
        for try await (id, state, uncertain, error) in rows.decode((String, String, Int, String).self) {
            out[id] = AppleRecord(state: state, uncertainCalls: uncertain, error: error)
        }
        return out
    }

    struct AppleRecord: Sendable {
        var state: String
        var uncertainCalls: Int
        var error: String
    }

    /// Seconds from the first claim of any of `ids` to the last one finished, as the ledger
    /// recorded them: the time the workers took for these jobs, free of the harness's polling.
    func span(_ ids: [String]) async throws -> Double {
        let rows = try await database.query("SELECT extract(epoch FROM max(finished_at) - min(created_at))::float8 FROM herald.job_runs WHERE message_id = ANY(\(ids)::text[])", logger: logger)
        for try await seconds in rows.decode(Double?.self) { if let seconds { return seconds } }
        throw ChaosFailure("no finished job among \(ids.count)")
    }

    /// Waits until every id has a final status (or the timeout); returns the statuses and
    /// when the last one became final (seconds since the call).
    func waitUntilFinal(_ ids: [String], timeout: Duration) async throws -> ([String: String], Double) {
        let start = ContinuousClock.now
        var latest: [String: String] = [:]
        while ContinuousClock.now - start < timeout {
            latest = (try? await statuses(ids)) ?? latest
            if ids.allSatisfy({ latest[$0].map(Self.final.contains) == true }) { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        return (latest, (ContinuousClock.now - start).seconds)
    }

    /// Fills in a result from the final statuses of `ids` (valid jobs) and what the providers
    /// accepted per job, by kind (SMS per verification id, emails per request id, pushes per
    /// receipt: each is the message id in this harness). Kinds without a counting provider
    /// (the dev outbox) are not counted for duplicates.
    func account(_ result: inout ScenarioResult, ids: [String], kinds: [String: JobKind], statuses: [String: String], accepted: [JobKind: ProviderCounts],
                 uncertain: [String: Int]) {
        result.published = ids.count
        for id in ids {
            let kind = kinds[id]
            let counts = kind.flatMap { accepted[$0] }
            let sends = counts?.accepted[id] ?? 0
            switch statuses[id] {
            case "completed":
                result.completed += 1
                if counts != nil, sends == 0 { result.missingSends += 1 }
            case "rejected", "dead": result.failed += 1
            default: result.lost += 1
            }
            if let kind, let counts, sends > 1 {
                result.duplicates.append(DuplicateSend(channel: kind, messageID: id, provider: counts.provider, sends: sends, uncertainRecorded: uncertain[id] ?? 0))
            }
        }
    }

    /// Takes every dead letter of the namespace (they belong to the scenario); returns how
    /// many, by reason category and sort, and how many had no reason.
    func drainDeadLetters(_ connection: AMQPConnection, topology: HeraldTopology) async throws -> (count: Int, reasons: [String: Int], withoutReason: Int) {
        var (count, reasons, withoutReason) = (0, [String: Int](), 0)
        for kind in JobKind.allCases {
            while let letter = try await connection.get(queue: topology.deadLetterQueue(kind)) {
                count += 1
                // Herald's stamp, or the one reason header of the re-publishing floor's copies.
                if let reason = DeadLetterStamp.reason(in: letter.properties.headers), !reason.isEmpty {
                    reasons[Self.reasonClass(reason), default: 0] += 1
                } else if case .string(let reason)? = letter.properties.headers["x-first-death-reason"] {
                    reasons["broker: \(reason)", default: 0] += 1
                } else {
                    withoutReason += 1
                }
                try await letter.ack()
            }
        }
        return (count, reasons, withoutReason)
    }

    /// A reason without its specifics (`field 'x' …` → a short class), for the report.
    static func reasonClass(_ reason: String) -> String {
        let classes = ["UTF-8", "JSON object", "not valid JSON", "over the limit", "max_message_bytes", "unknown job type", "message_id", "wrong type",
                       "missing required field", "version", "E.164", "email", "device_token", "platform", "run_id"]
        return classes.first { reason.localizedCaseInsensitiveContains($0) } ?? String(reason.prefix(40))
    }
}
