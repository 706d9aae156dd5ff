import ArgumentParser
import Foundation
import HeraldClient
import HeraldRuntime
import PostgresNIO

/// `heraldctl verify show-apple ACCOUNT`: an account's Sign in with Apple state, masked: its
/// Apple identity (`sub`, shortened), the refresh tokens stored (client id, key id, when; never
/// the token or its ciphertext), its `apple.token` / `apple.revoke` jobs and the notifications
/// acted on for it.
struct ShowApple: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show-apple",
        abstract: "Show an account's Sign in with Apple state: identity, stored tokens (never the token), jobs, notifications.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The account id.") var account: String

    func run() async throws {
        let context = try CLIContext.load(options)
        let (account, logger) = (self.account, context.logger)
        let time = #"'YYYY-MM-DD"T"HH24:MI:SSOF'"#
        let json: Data = try await context.withDatabase { client in
            var out: [String: Any] = ["account_id": account]
            let exists = try await client.query("SELECT EXISTS (SELECT 1 FROM herald.accounts WHERE id = \(account))", logger: logger)
            for try await found in exists.decode(Bool.self) { out["account_exists"] = found }
            let identity = try await client.query("""
                SELECT provider_uid FROM herald.account_providers WHERE account_id = \(account) AND provider = 'apple.com'
                """, logger: logger)
            for try await sub in identity.decode(String.self) { out["apple_sub"] = Self.mask(sub) }
            var tokens: [[String: Any]] = []
            for try await t in try await client.query("""
                SELECT client_id, key_id, to_char(created_at, \(unescaped: time)), to_char(updated_at, \(unescaped: time))
                  FROM herald.apple_tokens WHERE account_id = \(account) ORDER BY client_id
                """, logger: logger).decode((String, String, String, String).self) {
                tokens.append(["client_id": t.0, "key_id": t.1, "stored_at": t.2, "updated_at": t.3])
            }
            out["tokens"] = tokens
            var jobs: [[String: Any]] = []
            for try await j in try await client.query("""
                SELECT message_id, operation, client_id, state, coalesce(step, ''), calls, uncertain_calls, coalesce(http_status, 0),
                       coalesce(error, ''), coalesce(reason, ''), to_char(updated_at, \(unescaped: time))
                  FROM herald.apple_jobs WHERE account_id = \(account) ORDER BY created_at
                """, logger: logger).decode((String, String, String, String, String, Int, Int, Int, String, String, String).self) {
                var job: [String: Any] = ["message_id": j.0, "operation": j.1, "client_id": j.2, "state": j.3, "calls": j.5,
                                          "uncertain_calls": j.6, "updated_at": j.10]
                if !j.4.isEmpty { job["step"] = j.4 }
                if j.7 != 0 { job["http_status"] = j.7 }
                if !j.8.isEmpty { job["error"] = j.8 }
                if !j.9.isEmpty { job["reason"] = j.9 }
                jobs.append(job)
            }
            out["jobs"] = jobs
            var notifications: [[String: Any]] = []
            for try await n in try await client.query("""
                SELECT jti, type, outcome, client_id, to_char(event_time, \(unescaped: time)), to_char(received_at, \(unescaped: time))
                  FROM herald.apple_notifications WHERE account_id = \(account) ORDER BY received_at
                """, logger: logger).decode((String, String, String, String, String, String).self) {
                notifications.append(["jti": n.0, "type": n.1, "outcome": n.2, "client_id": n.3, "event_time": n.4, "received_at": n.5])
            }
            out["notifications"] = notifications
            return try JSONSerialization.data(withJSONObject: out)
        }
        guard let record = try JSONSerialization.jsonObject(with: json) as? [String: Any],
              record["account_exists"] as? Bool == true || !(record["jobs"] as? [Any] ?? []).isEmpty
                || !(record["notifications"] as? [Any] ?? []).isEmpty || !(record["tokens"] as? [Any] ?? []).isEmpty else {
            throw CLIExit.fail("no account \(account) and no Sign in with Apple record of it")
        }
        printRecord(record, json: options.output == .json, lists: ["tokens": "token", "jobs": "job", "notifications": "notification"])
    }

    /// Apple's `sub` (`001234.abcdef….0101`): its first six and last four characters.
    static func mask(_ sub: String) -> String {
        sub.count <= 12 ? String(repeating: "*", count: sub.count) : "\(sub.prefix(6))…\(sub.suffix(4))"
    }
}
