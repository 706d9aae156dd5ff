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
        let json: Data = try await context.withDatabase { client in
            var out: [String: Any] = ["account_id": account]
            if let found = try await AccountExists(accountID: account).first(on: client, logger: logger) { out["account_exists"] = found.exists }
            for identity in try await AccountAppleSubject(accountID: account).rows(on: client, logger: logger) {
                out["apple_sub"] = Self.mask(identity.sub)
            }
            out["tokens"] = try await AppleTokensOfAccount(accountID: account).rows(on: client, logger: logger).map { t -> [String: Any] in
                ["client_id": t.clientID, "key_id": t.keyID, "stored_at": t.storedAt, "updated_at": t.updatedAt]
            }
            out["jobs"] = try await AppleJobsOfAccount(accountID: account).rows(on: client, logger: logger).map { j -> [String: Any] in
                var job: [String: Any] = ["message_id": j.messageID, "operation": j.operation, "client_id": j.clientID, "state": j.state,
                                          "calls": j.calls, "uncertain_calls": j.uncertainCalls, "updated_at": j.updatedAt]
                if !j.step.isEmpty { job["step"] = j.step }
                if j.httpStatus != 0 { job["http_status"] = j.httpStatus }
                if !j.error.isEmpty { job["error"] = j.error }
                if !j.reason.isEmpty { job["reason"] = j.reason }
                return job
            }
            out["notifications"] = try await AppleNotificationsOfAccount(accountID: account).rows(on: client, logger: logger).map { n -> [String: Any] in
                ["jti": n.jti, "type": n.type, "outcome": n.outcome, "client_id": n.clientID, "event_time": n.eventTime, "received_at": n.receivedAt]
            }
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
