import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import Metrics
import PostgresNIO

/// The fraud guard of `herald-sms` (``FraudGuardConfiguration``): before a code is sent,
/// `herald.fraud_guard_check` judges the number's region and prefix; a scope whose
/// conversion collapsed is paused, and the pause's `sms.fraud_guard.paused` event is written
/// to the outbox in the transaction that pauses it (once per pause).
struct FraudGuard: Sendable {
    /// A paused scope: `region`/`prefix` and its key (`JM`, `+1876555`).
    struct Pause: Sendable, Equatable {
        var scope: String
        var key: String
        /// This request tripped it.
        var new: Bool
        var sent: Int64
        var verified: Int64
        /// When it ends by itself, and its length (nil: when an operator lifts it).
        var until: Date?
        var seconds: Int?
        /// Sends of the window reported undelivered.
        var undelivered: Int64 = 0
        /// `fraud_guard:prefix:+1876555`
        var reason: String { "fraud_guard:\(scope):\(key)" }
    }

    let configuration: FraudGuardConfiguration
    /// Where `sms.fraud_guard.paused` goes: the events exchange of the worker's `amqp.namespace`.
    let eventsExchange: String
    /// Concurrent jobs are judged together, in one statement and transaction (``GroupBatcher``).
    private let batcher: GroupBatcher<Request, Pause?>

    /// `eventsExchange`: ``HeraldTopology/eventsExchange`` of the worker's namespace;
    /// `timeout`: `database.operation_timeout_seconds`, the deadline of one judgement.
    init(configuration: FraudGuardConfiguration, eventsExchange: String, timeout: Duration) {
        self.configuration = configuration
        self.eventsExchange = eventsExchange
        batcher = GroupBatcher(maxBatch: PhoneGroups.maxGroup, timeout: timeout,
                               together: { try await Self.judge($0, configuration: configuration) },
                               alone: { try await Self.judge([$0], configuration: configuration)[0] })
    }

    /// One request to judge, with what it is judged on.
    private struct Request: Sendable {
        var verificationID: String
        var phone: String
        var region: String
        var prefix: String
        /// ``KnownNumbers/hashes(_:hasher:)`` of the number: a number that verified before is never refused.
        var knownHashes: String
        /// A later paid send of a verification judged before (a fallback's next channel): judged,
        /// not counted again.
        var again: Bool
        /// Its app verification was accepted: it goes ahead through a pause, as a known number does.
        var proven: Bool
        var exchange: String
        var client: PostgresClient
        var logger: Logger
    }

    /// The prefix of a number: its first `prefix_digits` digits after `+`.
    func prefix(of e164: String) -> String {
        String(e164.prefix(1 + min(configuration.prefixDigits, e164.count - 2)))
    }

    /// nil: go ahead (and the send and verification of this request are counted, unless `again`:
    /// a later paid send of a verification judged before, by the same pauses and floors).
    /// `knownHashes`: made only when the guard is on (``KnownNumbers/hashes(_:hasher:)``).
    /// `proven`: the request's app verification was accepted (it goes ahead through a pause).
    func check(verificationID: String, phone: String, region: String, knownHashes: @autoclosure () -> String, again: Bool = false,
               proven: Bool, client: PostgresClient, logger: Logger) async throws -> Pause? {
        guard configuration.enabled else { return nil }
        return try await batcher.submit(Request(verificationID: verificationID, phone: phone, region: region, prefix: prefix(of: phone),
                                                knownHashes: knownHashes(), again: again, proven: proven, exchange: eventsExchange, client: client, logger: logger))
    }

    /// `herald.fraud_guard_check` for each request, in order, in one transaction with the events
    /// of the pauses it made.
    private static func judge(_ requests: [Request], configuration c: FraudGuardConfiguration) async throws -> [Pause?] {
        let (client, logger) = (requests[0].client, requests[0].logger)
        return try await Database.retryingConflicts {
            try await client.withTransaction(logger: logger) { connection -> [Pause?] in
                let judge = FraudGuardJudge(
                    verificationIDs: requests.map(\.verificationID), phones: requests.map(\.phone), regions: requests.map(\.region),
                    prefixes: requests.map(\.prefix), knownHashes: requests.map(\.knownHashes), again: requests.map(\.again),
                    proven: requests.map(\.proven), windowMinutes: c.windowMinutes, regionFloor: c.regionFloor, prefixFloor: c.prefixFloor,
                    minConversion: c.minConversion, pauseSeconds: c.pauseSeconds, maxPauseSeconds: c.maxPauseSeconds,
                    graceSeconds: c.liftGraceSeconds, maxUndelivered: c.maxUndelivered, usualMultiple: c.usualMultiple)
                var pauses = [Pause?](repeating: nil, count: requests.count)
                for row in try await judge.rows(on: connection, logger: logger) {
                    guard let scope = row.scope, let key = row.key, (1...requests.count).contains(row.index) else { continue }
                    pauses[row.index - 1] = Pause(scope: scope, key: key, new: row.new ?? false, sent: Int64(row.sent ?? 0),
                                                  verified: Int64(row.verified ?? 0), until: row.until, seconds: row.seconds,
                                                  undelivered: Int64(row.undelivered ?? 0))
                }
                for (request, pause) in zip(requests, pauses) {
                    guard let pause, pause.new else { continue }
                    try await EventOutbox.insert([Self.pausedEvent(pause, configuration: c)], exchange: request.exchange, on: connection, logger: logger)
                }
                return pauses
            }
        }
    }

    /// `sms.fraud_guard.paused`: a scope stopped receiving codes.
    static func pausedEvent(_ pause: Pause, configuration: FraudGuardConfiguration) -> OutgoingEvent {
        OutgoingEvent(name: "sms.fraud_guard.paused", payload: PausedEvent(
            scope: pause.scope, key: pause.key, reason: pause.reason, sent: pause.sent, verified: pause.verified, undelivered: pause.undelivered,
            windowMinutes: configuration.windowMinutes, minConversion: configuration.minConversion, maxUndelivered: configuration.maxUndelivered,
            pauseSeconds: pause.seconds, until: pause.until?.iso8601Milliseconds))
    }

    struct PausedEvent: Encodable {
        var scope: String
        var key: String
        var reason: String
        var sent: Int64
        var verified: Int64
        /// Sends of the window its providers reported undelivered.
        var undelivered: Int64
        var windowMinutes: Int
        var minConversion: Double
        var maxUndelivered: Double
        /// This pause's length (doubled for each consecutive pause less than a day apart); nil: until an operator lifts it.
        var pauseSeconds: Int?
        /// When it ends by itself (RFC 3339); nil: when an operator lifts it.
        var until: String?
        enum CodingKeys: String, CodingKey {
            case scope, key, reason, sent, verified, undelivered, until
            case windowMinutes = "window_minutes", minConversion = "min_conversion", pauseSeconds = "pause_seconds"
            case maxUndelivered = "max_undelivered"
        }
    }
}
