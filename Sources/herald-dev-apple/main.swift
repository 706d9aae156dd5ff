import AsyncHTTPClient
import Foundation
import HeraldApple
import HeraldClient
import HeraldRuntime
import HeraldWorkers
import HeraldWire
import Logging
import PostgresNIO

// herald-dev-apple: the local Apple of `make run` and the demo's steps against it, as a front
// API and the user's device would take them (scripts/run-local.sh runs them in this order).
//   serve DIR                  the local Apple (LocalApple.swift), until killed
//   link URL CLIENT_ID         an account linked to a new Apple identity; apple.token with a code
//                              the local Apple issued for it, until herald-apple decided it
//   notify URL CLIENT_ID ACCOUNT SUB EMAIL TYPE
//                              an apple.notification Apple signed (email-disabled, ...), until
//                              herald-apple acted; then whether the relay address is deliverable
//   delete ACCOUNT             HeraldAccounts.deleteAccount (which enqueues apple.revoke through
//                              the event outbox), until the revocation is decided
//   counts URL SUB             what reached the local Apple for that identity
// The configuration is Herald's (HERALD_* variables, as for heraldctl). Not for deployments.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("herald-dev-apple: \(message)\n".utf8))
    exit(1)
}

/// The body of a GET to the local Apple's `/dev/…` routes.
func get(_ url: String) async throws -> String {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
    let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
    guard response.status.code == 200 else { fail("\(url): \(response.status.code) \(body)") }
    return body
}

func query(_ pairs: [(String, String)]) -> String {
    pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.1)" }.joined(separator: "&")
}

/// Runs `body` with Herald's configuration, a running database client and a logger.
func withHerald<T: Sendable>(_ body: @Sendable (HeraldConfiguration, PostgresClient, Logger) async throws -> T) async throws -> T {
    let configuration = HeraldConfiguration.loadAllOrExit(path: nil, tool: "herald-dev-apple", requireKeyRing: false)
    var logger = Logger(label: "herald-dev-apple")
    logger.logLevel = .error
    let database = try Database.makeClient(configuration.database, logger: logger)
    let running = Task { await database.run() }
    defer { running.cancel() }
    return try await body(configuration, database, logger)
}

/// Polls `read` every 200 ms for up to 30 s until it returns a value.
func waitFor<T>(_ what: String, _ read: () async throws -> T?) async throws -> T {
    for _ in 0..<150 {
        if let value = try await read() { return value }
        try await Task.sleep(for: .milliseconds(200))
    }
    fail("\(what): not within 30 s (see .run/logs/apple.log)")
}

/// The ledger status of a message once final (`herald.job_runs`).
func finalStatus(_ messageID: String, _ database: PostgresClient, _ logger: Logger) async throws -> String? {
    let rows = try await database.query("SELECT status FROM herald.job_runs WHERE message_id = \(messageID)", logger: logger)
    for try await status in rows.decode(String.self) where ["completed", "rejected", "dead"].contains(status) { return status }
    return nil
}

func enqueue<Job: HeraldJob>(_ job: Job, _ configuration: HeraldConfiguration, _ logger: Logger) async throws -> String {
    let client = try HeraldClient(configuration: configuration.amqp, logger: logger)
    try await client.connection.waitUntilConnected(timeout: .seconds(10))
    let id = try await client.enqueue(job)
    await client.close()
    return id
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "serve" where arguments.count == 2:
    try await LocalApple.serve(directory: arguments[1])

case "link" where arguments.count == 3:
    let (url, clientID) = (arguments[1], arguments[2])
    let digits = { (n: Int) in (0..<n).map { _ in String(Int.random(in: 0...9)) }.joined() }
    let account = "demo-apple-\(digits(6))"
    // Apple's `sub` looks like this: digits, a 32-hex part, digits.
    let subject = "00\(digits(4)).\((0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()).0\(digits(3))"
    let email = "\((0..<5).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined())@\(PrivateRelayAddresses.domain)"
    try await withHerald { configuration, database, logger in
        _ = try await AccountStore(client: database, logger: logger).createAccount(id: account, provider: "apple.com", providerUID: subject)
        let code = try await get("\(url)/dev/code?" + query([("sub", subject), ("client_id", clientID)]))
        let id = try await enqueue(AppleTokenJob(accountID: account, clientID: clientID, authorizationCode: code), configuration, logger)
        print("apple account_id: \(account)")
        print("apple sub: \(subject)")
        print("apple relay_email: \(email)")
        let status = try await waitFor("apple.token") { try await finalStatus(id, database, logger) }
        print("apple.token \(id): \(status)")
    }

case "notify" where arguments.count == 7:
    let (url, clientID, account, subject, email, type) = (arguments[1], arguments[2], arguments[3], arguments[4], arguments[5], arguments[6])
    try await withHerald { configuration, database, logger in
        let payload = try await get("\(url)/dev/notification?" + query([("type", type), ("sub", subject), ("email", email), ("client_id", clientID)]))
        let id = try await enqueue(AppleNotificationJob(payload: payload), configuration, logger)
        let status = try await waitFor("apple.notification") { try await finalStatus(id, database, logger) }
        print("apple.notification \(type) for \(account) \(id): \(status)")
        let relay = PrivateRelayAddresses(hasher: SecretHasher(keyRing: try configuration.secrets.keyRing()))
        let undeliverable = try await relay.isUndeliverable(email, client: database, logger: logger)
        print("relay address \(Redact.email(email)): \(undeliverable ? "undeliverable (herald-email refuses mail to it: apple_relay_disabled)" : "deliverable")")
    }

case "delete" where arguments.count == 2:
    let account = arguments[1]
    try await withHerald { configuration, database, logger in
        let topology = HeraldTopology(configuration.amqp, configuration.runner)
        guard try await HeraldAccounts(database: database, logger: logger, topology: topology).deleteAccount(id: account) else { fail("no account \(account)") }
        print("account \(account) deleted (HeraldAccounts.deleteAccount: account.deleted and its apple.revoke, in one transaction)")
        let state = try await waitFor("apple.revoke") { () -> String? in
            let rows = try await database.query("""
                SELECT state FROM herald.apple_jobs WHERE account_id = \(account) AND operation = 'revoke' AND state IN ('revoked','nothing','failed','uncertain')
                """, logger: logger)
            for try await state in rows.decode(String.self) { return state }
            return nil
        }
        print("apple.revoke for \(account): \(state)")
    }

case "counts" where arguments.count == 3:
    let counts = try await get("\(arguments[1])/dev/counts?" + query([("sub", arguments[2])]))
    print("the local Apple saw for this identity: \(counts)")

default:
    fail("usage: herald-dev-apple serve DIR | link URL CLIENT_ID | notify URL CLIENT_ID ACCOUNT SUB EMAIL TYPE | delete ACCOUNT | counts URL SUB")
}
exit(0)
