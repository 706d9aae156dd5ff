import Crypto
import Foundation
import HeraldClient
import HeraldStubs
import Logging
import PostgresNIO
import Synchronization
@testable import HeraldApple
@testable import HeraldRuntime

/// `herald-apple` in-process on a test's namespace, calling a local Apple (JWKS, token and
/// revoke endpoints) with a `.p8` key, team and key id and token keys made for the test. Accounts
/// it creates get an `apple.com` identity; the stub and the accounts go when the harness closes.
final class AppleTokenFixture: @unchecked Sendable {
    let harness: Harness
    let apple: AppleStubServer
    let endpoints: AppleTokenEndpoints
    let teamKey = P256.Signing.PrivateKey()
    let teamID = "TEAM15B000"
    let keyID = "KEY15B0000"
    let clientID: String
    let tokenKeys = "t1:" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    /// The channel's events, as a front API's consumer reads them.
    let events: EventTap
    private let accounts = Mutex<[String]>([])

    init(_ harness: Harness) async throws {
        self.harness = harness
        clientID = "com.example.\(harness.namespace.filter { $0.isLetter || $0.isNumber })"
        apple = try await AppleStubServer()
        endpoints = apple.tokenEndpoints(teamID: teamID, keyID: keyID, teamKey: teamKey.publicKey)
        events = try await EventTap(harness, channel: "apple")
        harness.onClose { await self.close() }
    }

    func configuration(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) -> HeraldConfiguration {
        var configuration = harness.configuration
        configuration.apple.clientIDs = [clientID]
        configuration.apple.jwksURL = apple.jwksURL
        configuration.apple.tokens.teamID = teamID
        configuration.apple.tokens.keyID = keyID
        configuration.apple.tokens.privateKey = teamKey.pemRepresentation
        configuration.apple.tokens.tokenURL = apple.tokenURL
        configuration.apple.tokens.revokeURL = apple.revokeURL
        configuration.apple.tokens.tokenKeys = tokenKeys
        // Generous: under the whole suite on two cores a local round trip (and the client
        // secret's signature) took over a second, the call timed out and was made again. The
        // test of a hanging Apple sets its own short timeout.
        configuration.apple.tokens.timeoutMilliseconds = 15_000
        configure(&configuration)
        return configuration
    }

    func start(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> RunningWorker {
        let configuration = configuration(configure)
        return try await harness.startRunner(.apple, try AppleHandler(configuration: configuration)) { $0 = configuration }
    }

    /// A new account linked to an Apple identity; returns (account id, Apple `sub`).
    func account(_ n: Int) async throws -> (String, String) {
        let id = "\(harness.namespace)-apple-\(n)"
        let subject = "000\(n).\(harness.namespace.filter(\.isHexDigit)).0\(n)"
        try await AccountStore(client: harness.database, logger: harness.logger).createAccount(id: id, provider: "apple.com", providerUID: subject)
        accounts.withLock { $0.append(id) }
        return (id, subject)
    }

    /// The stored token row as it is in the database: (key id, nonce, ciphertext, tag), nil when none.
    func tokenRow(_ accountID: String) async throws -> (String, [UInt8], [UInt8], [UInt8])? {
        let rows = try await harness.database.query("""
            SELECT key_id, nonce, ciphertext, tag FROM herald.apple_tokens WHERE account_id = \(accountID) AND client_id = \(clientID)
            """, logger: harness.logger)
        for try await (keyID, nonce, ciphertext, tag) in rows.decode((String, ByteBuffer, ByteBuffer, ByteBuffer).self) {
            return (keyID, Array(buffer: nonce), Array(buffer: ciphertext), Array(buffer: tag))
        }
        return nil
    }

    func record(_ messageID: String) async throws -> AppleStore.Record? {
        try await AppleStore.record(messageID, client: harness.database, logger: harness.logger)
    }

    func close() async {
        let ids = accounts.withLock { $0 }
        let (database, logger) = (harness.database, harness.logger)
        _ = try? await database.query("DELETE FROM herald.apple_tokens WHERE account_id = ANY(\(ids)::text[])", logger: logger)
        _ = try? await database.query("DELETE FROM herald.apple_jobs WHERE account_id = ANY(\(ids)::text[])", logger: logger)
        _ = try? await database.query("DELETE FROM herald.accounts WHERE id = ANY(\(ids)::text[])", logger: logger)
        _ = try? await database.query("DELETE FROM herald.event_outbox WHERE body LIKE ANY(\(ids.map { "%\"\($0)\"%" })::text[])", logger: logger)
        await apple.close()
    }
}
