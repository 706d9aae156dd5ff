import ArgumentParser
import Foundation
import HeraldAPIStore
import HeraldRuntime

/// `heraldctl api-keys …`: herald-api's keys (docs/api.md, "Authentication"). The secret is
/// printed once, at creation; Herald keeps only its HMAC under the key ring.
struct APIKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-keys",
        abstract: "herald-api's API keys: create (the secret is shown once), list, revoke.",
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key; prints its id and secret (the secret only now).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "What the key is for (1 to 100 characters).") var name: String
        @Option(help: "Route families, comma-separated: sms, email, push, apple, accounts, verify, or all.") var scopes: String
        @Option(help: "Days until the key expires (none: it lasts until revoked).") var expiresInDays: Int?
        @Flag(help: "A server key: the front API's server names the end user's IP (client_ip, DeviceIp); its own address is never counted per IP.")
        var assertsClientIP = false

        func run() async throws {
            let context = try CLIContext.load(options)
            let hasher: SecretHasher
            let scopes: Set<APIScope>
            do {
                hasher = SecretHasher(keyRing: try context.configuration.secrets.keyRing())
                scopes = try APIScope.parse(self.scopes)
            } catch let error as APIKeyError {
                throw CLIExit.fail("--scopes: \(error)", code: .usage)
            } catch {
                throw CLIExit.fail("\(error)", code: .configuration)
            }
            if let days = expiresInDays, !(1...3650).contains(days) { throw CLIExit.fail("--expires-in-days must be 1 to 3650", code: .usage) }
            let expires = expiresInDays.map { Date().addingTimeInterval(Double($0) * 86_400) }
            let (name, server, logger) = (self.name, assertsClientIP, context.logger)
            let created: (APIKey, String)
            do {
                created = try await context.withDatabase { client in
                    let (key, secret) = try await APIKeyStore(client: client, hasher: hasher).create(name: name, scopes: scopes, expiresAt: expires,
                                                                                              assertsClientIP: server, logger: logger)
                    return (key, secret.revealed)
                }
            } catch let error as APIKeyError {
                throw CLIExit.fail("\(error)", code: .usage)
            }
            let (key, secret) = created
            if options.output == .json {
                printJSON(["id": key.id, "secret": secret, "name": key.name, "scopes": key.scopes.sorted().map(\.rawValue),
                           "expires_at": key.expiresAt?.iso8601Milliseconds ?? NSNull(), "asserts_client_ip": key.assertsClientIP])
            } else {
                print("id: \(key.id)\nsecret: \(secret)\nscopes: \(key.scopes.sorted().map(\.rawValue).joined(separator: ","))")
                if key.assertsClientIP { print("server key: names the end user's IP (client_ip, DeviceIp)") }
                print("(the secret is not shown again: Basic auth \(key.id):<secret>, or Bearer \(key.id).<secret> on /v1)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every key: id, name, scopes, dates (never a secret).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let context = try CLIContext.load(options)
            let hasher = try keyRingHasher(context)
            let logger = context.logger
            let keys = try await context.withDatabase { client in try await APIKeyStore(client: client, hasher: hasher).list(logger: logger) }
            let rows: [[String: Any]] = keys.map { key in
                var row: [String: Any] = ["id": key.id, "name": key.name, "scopes": key.scopes.sorted().map(\.rawValue).joined(separator: ","),
                                          "created_at": key.createdAt.iso8601Milliseconds, "asserts_client_ip": key.assertsClientIP]
                row["expires_at"] = key.expiresAt?.iso8601Milliseconds
                row["revoked_at"] = key.revokedAt?.iso8601Milliseconds
                row["last_used_at"] = key.lastUsedAt?.iso8601Milliseconds
                return row
            }
            if options.output == .json { printJSON(["keys": rows]); return }
            if rows.isEmpty { print("no API key"); return }
            for row in rows { print(row.keys.sorted().map { "\($0)=\(row[$0]!)" }.joined(separator: " ")) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key: refused from its next request on.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The key id (HK…).") var id: String

        func run() async throws {
            let context = try CLIContext.load(options)
            let hasher = try keyRingHasher(context)
            let (id, logger) = (self.id, context.logger)
            let revoked = try await context.withDatabase { client in try await APIKeyStore(client: client, hasher: hasher).revoke(id: id, logger: logger) }
            guard revoked else { throw CLIExit.fail("no active API key \(id)") }
            print("revoked \(id)")
        }
    }
}

private func keyRingHasher(_ context: CLIContext) throws -> SecretHasher {
    do {
        return SecretHasher(keyRing: try context.configuration.secrets.keyRing())
    } catch {
        throw CLIExit.fail("\(error)", code: .configuration)
    }
}
