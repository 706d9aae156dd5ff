import Foundation
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
        /// `fraud_guard:prefix:+1876555`
        var reason: String { "fraud_guard:\(scope):\(key)" }
    }

    let configuration: FraudGuardConfiguration
    /// Where `sms.fraud_guard.paused` goes (`<amqp.namespace>.events`).
    var eventsExchange = "herald.events"

    /// The prefix of a number: its first `prefix_digits` digits after `+`.
    func prefix(of e164: String) -> String {
        String(e164.prefix(1 + min(configuration.prefixDigits, e164.count - 2)))
    }

    /// nil: go ahead (and the send and verification of this request are counted).
    func check(verificationID: String, phone: String, region: String, client: PostgresClient, logger: Logger) async throws -> Pause? {
        guard configuration.enabled else { return nil }
        let (c, prefix, exchange) = (configuration, prefix(of: phone), eventsExchange)
        return try await Database.retryingConflicts {
            try await client.withTransaction(logger: logger) { connection -> Pause? in
                let rows = try await connection.query("""
                    SELECT o_scope, o_key, o_new, o_sent, o_verified FROM herald.fraud_guard_check(
                        \(verificationID), \(phone), \(region), \(prefix), \(c.windowMinutes)::int,
                        \(c.regionFloor)::int, \(c.prefixFloor)::int, \(c.minConversion)::float8, \(c.pauseSeconds)::int)
                    """, logger: logger)
                var pause: Pause?
                for try await (scope, key, new, sent, verified) in rows.decode((String, String, Bool, Int64, Int64).self) {
                    pause = Pause(scope: scope, key: key, new: new, sent: sent, verified: verified)
                }
                if let pause, pause.new {
                    try await EventOutbox.insert([Self.pausedEvent(pause, configuration: c)], exchange: exchange, on: connection, logger: logger)
                }
                return pause
            }
        }
    }

    /// `sms.fraud_guard.paused`: a scope stopped receiving codes.
    static func pausedEvent(_ pause: Pause, configuration: FraudGuardConfiguration) -> OutgoingEvent {
        OutgoingEvent(name: "sms.fraud_guard.paused", payload: PausedEvent(
            scope: pause.scope, key: pause.key, reason: pause.reason, sent: pause.sent, verified: pause.verified,
            windowMinutes: configuration.windowMinutes, minConversion: configuration.minConversion,
            pauseSeconds: configuration.pauseSeconds == 0 ? nil : configuration.pauseSeconds))
    }

    struct PausedEvent: Encodable {
        var scope: String
        var key: String
        var reason: String
        var sent: Int64
        var verified: Int64
        var windowMinutes: Int
        var minConversion: Double
        /// nil: until an operator lifts it.
        var pauseSeconds: Int?
        enum CodingKeys: String, CodingKey {
            case scope, key, reason, sent, verified
            case windowMinutes = "window_minutes", minConversion = "min_conversion", pauseSeconds = "pause_seconds"
        }
    }
}
