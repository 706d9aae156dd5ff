import ArgumentParser
import Foundation
import HeraldPhone
import HeraldRuntime

/// `heraldctl fraud …`: the SMS fraud guard's pauses (docs/operations.md, "Fraud guard").
struct Fraud: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The SMS fraud guard: scopes (regions, number prefixes) it paused, and lifting a pause.",
        subcommands: [Status.self, Lift.self])

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Paused scopes: since when, the window that tripped them and the window now.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Lifted and expired pauses too.") var all = false

        func run() async throws {
            let context = try CLIContext.load(options)
            let (all, window) = (self.all, context.configuration.sms.fraudGuard.windowMinutes)
            let scopes = try await context.withDatabase { client in
                try await FraudGuardStore.status(all: all, windowMinutes: window, client: client, logger: context.logger)
            }
            if options.output == .json {
                printJSON(["enabled": context.configuration.sms.fraudGuard.enabled, "window_minutes": window, "scopes": scopes.map(Self.json)])
                return
            }
            if !context.configuration.sms.fraudGuard.enabled { print("note: sms.fraud_guard.enabled is false in this configuration") }
            if scopes.isEmpty { print(all ? "no scope was ever paused" : "no scope is paused"); return }
            for s in scopes {
                var line = "\(s.name)  \(s.state) since \(s.pausedAt.iso8601Milliseconds)  tripped at \(s.verifiedAtPause)/\(s.sentAtPause) verified"
                    + ", \(s.undeliveredAtPause) undelivered"
                line += "  window now \(s.verified)/\(s.sent), \(s.undelivered) undelivered"
                if let expires = s.expiresAt { line += "  expires \(expires.iso8601Milliseconds)" }
                if let by = s.liftedBy, let at = s.liftedAt { line += "  lifted by \(by) at \(at.iso8601Milliseconds)" }
                print(line)
            }
        }

        static func json(_ s: FraudGuardStore.Scope) -> [String: Any] {
            var out: [String: Any] = [
                "scope": s.scope, "key": s.key, "name": s.name, "state": s.state, "paused_at": s.pausedAt.iso8601Milliseconds,
                "sent_at_pause": s.sentAtPause, "verified_at_pause": s.verifiedAtPause, "pauses": s.pauses,
                "sent": s.sent, "verified": s.verified, "conversion": s.conversion ?? NSNull(),
                "undelivered_at_pause": s.undeliveredAtPause, "undelivered": s.undelivered,
            ]
            out["expires_at"] = s.expiresAt?.iso8601Milliseconds ?? NSNull()
            out["lifted_at"] = s.liftedAt?.iso8601Milliseconds ?? NSNull()
            out["lifted_by"] = s.liftedBy ?? NSNull()
            out["grace_until"] = s.graceUntil?.iso8601Milliseconds ?? NSNull()
            return out
        }
    }

    struct Lift: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lift a pause (region:JM, prefix:+1876555); not paused again for sms.fraud_guard.lift_grace_seconds.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The scope: region:<ISO code> or prefix:<+digits> (as `fraud status` and the refusal reason name it).") var scope: String
        @Option(help: "Who lifts it, recorded (default: $USER).") var by: String?

        func run() async throws {
            let context = try CLIContext.load(options)
            guard let (kind, key) = FraudGuardStore.parse(scope) else {
                throw CLIExit.fail("scope must be region:<code> or prefix:<+digits>, got '\(scope)'", code: .usage)
            }
            let who = by ?? ProcessInfo.processInfo.environment["USER"] ?? "unknown"
            let grace = context.configuration.sms.fraudGuard.liftGraceSeconds
            let lifted = try await context.withDatabase { client in
                try await FraudGuardStore.lift(scope: kind, key: key, by: who, graceSeconds: grace, client: client, logger: context.logger)
            }
            if options.output == .json {
                printJSON(["scope": "\(kind):\(key)", "lifted": lifted, "by": who, "grace_seconds": grace])
            } else {
                print(lifted ? "lifted \(kind):\(key) (by \(who); not paused again for \(grace) s)" : "\(kind):\(key) is not paused")
            }
            if !lifted { throw CLIExit.fail("\(kind):\(key) is not paused", code: .failure) }
        }
    }
}
