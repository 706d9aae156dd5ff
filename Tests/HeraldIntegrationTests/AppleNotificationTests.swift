import AMQP
import Crypto
import Foundation
@testable import HeraldApple
@testable import HeraldAppleCheck
@testable import HeraldEmail
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import PostgresNIO
import Testing

/// `apple.notification` through a running herald-apple against the local Apple (its JWKS and
/// its notification signer): each event type does what it says (email-disabled stops mail to
/// the relay address through the real herald-email until email-enabled; consent-revoked
/// unlinks; account-delete deletes), and each bad form is refused with the check named and
/// nothing changed.
@Suite(.needsServers) struct AppleNotificationTests {
    @Test func emailDisabledStopsMailToTheRelayAddressUntilEmailEnabled() async throws {
        try await withAppleNotifications { apple in
            let email = try await EmailFixture(apple.harness)
            let mailer = try await email.start()
            let address = EmailAppleRelayTests.relayAddress(email, 1)
            apple.forget(address)
            let before = email.job(1, to: address)
            let beforeID = try await apple.harness.enqueue(before)
            try await eventually("sent before") { try await apple.harness.ledger(beforeID)?.0 == "completed" }

            let disabledAt = Date()
            try await apple.deliver(type: "email-disabled", email: address, issuedAt: disabledAt)
            let refused = email.job(2, to: address)
            let refusedID = try await apple.harness.enqueue(refused)
            try await eventually("refused") { try await apple.harness.ledger(refusedID)?.0 == "rejected" }
            #expect(try await email.request(refused.requestID)?.1 == "apple_relay_disabled")

            try await apple.deliver(type: "email-enabled", email: address, issuedAt: disabledAt.addingTimeInterval(2))
            let after = email.job(3, to: address)
            let afterID = try await apple.harness.enqueue(after)
            try await eventually("sent after") { try await apple.harness.ledger(afterID)?.0 == "completed" }
            #expect(EmailAppleRelayTests.delivered(to: address) == 2, "the mail before and the mail after, none while disabled")

            let events = try await apple.events.take(atLeast: 2)
            #expect(EventTap.namesByOccurrence(events) == ["apple.relay.disabled", "apple.relay.enabled"])
            #expect(events.allSatisfy { $0.1["applied"] as? Bool == true && $0.1["client_id"] as? String == apple.clientID })
            #expect(events.allSatisfy { ($0.1["email"] as? String)?.hasPrefix("u***@") == true }, "masked")
            #expect(try await apple.outcomes() == ["applied", "applied"])
            try await mailer.stop()
        }
    }

    @Test func consentRevokedUnlinksTheAppleIdentityAndDropsItsTokens() async throws {
        try await withAppleNotifications { apple in
            let account = try await apple.linkedAccount(1)
            try await apple.storeFakeToken(account)
            try await apple.deliver(type: "consent-revoked", subject: apple.subject(1))
            let providers = try #require(try await apple.store.account(account)).providers
            #expect(!providers.contains("apple.com"), "unlinked")
            #expect(try await apple.tokens(account) == 0)
            #expect(try await apple.revocationsEnqueued() == 0, "consent already revoked at Apple: nothing to revoke")
            let events = try await apple.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["apple.consent.revoked"])
            #expect(events.first?.1["account_id"] as? String == account)
            #expect(events.first?.1["tokens_dropped"] as? Int == 1)

            // Nobody has that identity any more: recorded, nothing to change.
            try await apple.deliver(type: "consent-revoked", subject: apple.subject(1))
            #expect(try await apple.outcomes() == ["applied", "no_account"])
        }
    }

    @Test func accountDeleteDeletesTheAccountAndItsTokens() async throws {
        try await withAppleNotifications { apple in
            let deletedTap = try await EventTap(apple.harness, channel: "account")
            let account = try await apple.linkedAccount(1)
            let other = try await apple.linkedAccount(2)
            try await apple.storeFakeToken(account)
            try await apple.deliver(type: "account-delete", subject: apple.subject(1))
            #expect(try await apple.store.account(account) == nil, "deleted")
            #expect(try await apple.store.account(other) != nil, "another account stays")
            #expect(try await apple.tokens(account) == 0)
            #expect(try await apple.revocationsEnqueued() == 0, "the Apple ID is gone: no revocation enqueued by the delete")
            #expect(try await apple.events.take(atLeast: 1).map(\.0) == ["apple.account.deleted"])
            let deleted = try await deletedTap.take(atLeast: 1)
            #expect(deleted.map(\.0) == ["account.deleted"])
            #expect(deleted.first?.1["account_id"] as? String == account)
            #expect(deleted.first?.1["reason"] as? String == AppleNotifications.accountDeletedReason)
        }
    }

    /// Malformed, unsigned, wrongly signed, wrong audience, stale, replayed and unknown-key
    /// notifications: each dead-lettered with the check it failed (never the token), and none
    /// changes the account or the relay.
    @Test func badNotificationsAreRefusedAndChangeNothing() async throws {
        try await withAppleNotifications { apple in
            let account = try await apple.linkedAccount(1)
            try await apple.storeFakeToken(account)
            let stub = apple.stub
            let kid = try #require(stub.keyIDs.last)
            let header = EmailAppleRelayTests.base64URL(#"{"alg":"none","typ":"JWT"}"#)
            let claims = EmailAppleRelayTests.base64URL(#"{"iss":"https://appleid.apple.com","aud":"\#(apple.clientID)","iat":\#(Int(Date().timeIntervalSince1970)),"jti":"x","events":"{\"type\":\"account-delete\",\"sub\":\"\#(apple.subject(1))\"}"}"#)
            let replayed = try await apple.notification(type: "consent-revoked", subject: "nobody-\(apple.harness.namespace)")
            let cases: [(String, String)] = [
                ("malformed", "eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln"),
                ("malformed", "\(header).\(claims).AAAA"), // unsigned (alg none)
                ("bad_signature", try await apple.notification(type: "account-delete", subject: apple.subject(1), key: .unpublished(kid: kid))),
                ("wrong_audience", try await stub.notification(audience: "com.example.other", type: "account-delete", subject: apple.subject(1))),
                ("stale", try await apple.notification(type: "account-delete", subject: apple.subject(1), issuedAt: Date().addingTimeInterval(-3_600))),
                ("unknown_key", try await apple.notification(type: "account-delete", subject: apple.subject(1), key: .unpublished(kid: "never-published"))),
            ]
            let firstID = try await apple.harness.enqueue(AppleNotificationJob(payload: replayed))
            try await eventually("the original handled") { try await apple.harness.ledger(firstID)?.0 == "completed" }
            var expected: [String: String] = [try await apple.harness.enqueue(AppleNotificationJob(payload: replayed)): "replayed"]
            for (check, payload) in cases { expected[try await apple.harness.enqueue(AppleNotificationJob(payload: payload))] = check }

            var letters: [String: String] = [:]
            try await eventually(timeout: .seconds(30), "every bad notification dead-lettered") {
                for letter in try await apple.harness.drainDeadLetters(.apple) {
                    if let reason = letter.properties.deadLetterStamp?.reason { letters[letter.properties.messageID ?? ""] = reason }
                }
                return letters.count == expected.count
            }
            for (id, check) in expected {
                let reason = try #require(letters[id], "\(check) dead-lettered")
                #expect(reason.contains(check), "\(check): \(reason)")
                #expect(!reason.contains("eyJ"), "no token in the reason")
            }
            #expect(try await apple.store.account(account)?.providers.contains("apple.com") == true, "nothing changed")
            #expect(try await apple.tokens(account) == 1)
            #expect(try await apple.outcomes() == ["no_account"], "only the original was acted on")
        }
    }
}

extension EmailAppleRelayTests {
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A harness with the local Apple and a herald-apple worker verifying notifications against it.
func withAppleNotifications(_ body: (AppleNotificationFixture) async throws -> Void) async throws {
    try await withHarness { harness in
        let fixture = try await AppleNotificationFixture(harness)
        try await body(fixture)
    }
}

final class AppleNotificationFixture: Sendable {
    let harness: Harness
    let stub: AppleStubServer
    let events: EventTap
    let store: AccountStore
    let relay: PrivateRelayAddresses
    let clientID = "com.example.herald-tests"

    init(_ harness: Harness) async throws {
        self.harness = harness
        stub = try await AppleStubServer()
        events = try await EventTap(harness, channel: "apple")
        store = AccountStore(client: harness.database, logger: harness.logger)
        relay = PrivateRelayAddresses(hasher: SecretHasher(keyRing: try harness.configuration.secrets.keyRing()))
        var configuration = harness.configuration
        configuration.apple = Self.apple(clientID: clientID, stub: stub)
        let handler = try AppleHandler(configuration: configuration)
        let stub = self.stub
        harness.onClose { await stub.close() }
        harness.onClose { [harness] in
            _ = try? await harness.database.query("DELETE FROM herald.apple_notifications WHERE jti LIKE \(harness.namespace + "-%")", logger: harness.logger)
        }
        _ = try await harness.startRunner(.apple, handler) { $0 = configuration }
    }

    /// `apple.*` for the local Apple: the client id, its JWKS, a made-up team and `.p8` key, a token key ring.
    static func apple(clientID: String, stub: AppleStubServer) -> AppleConfiguration {
        var apple = AppleConfiguration()
        apple.clientIDs = [clientID]
        apple.jwksURL = stub.jwksURL
        apple.notifications.maxAgeSeconds = 600
        apple.tokens.teamID = "TEAM000001"
        apple.tokens.keyID = "KEY0000001"
        apple.tokens.privateKey = P256.Signing.PrivateKey().pemRepresentation
        apple.tokens.tokenURL = stub.baseURL + "/auth/token"
        apple.tokens.revokeURL = stub.baseURL + "/auth/revoke"
        apple.tokens.tokenKeys = "t1:" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        return apple
    }

    func subject(_ n: Int) -> String { "001234.\(harness.namespace)\(n).0101" }

    /// An account with the Apple identity `subject(n)`.
    func linkedAccount(_ n: Int) async throws -> String {
        let id = "\(harness.namespace)-apple-\(n)"
        _ = try await store.createAccount(id: id, provider: "apple.com", providerUID: subject(n))
        return id
    }

    /// A stored refresh token row (sealed bytes the test never opens).
    func storeFakeToken(_ account: String) async throws {
        let random = { (n: Int) in ByteBuffer(bytes: (0..<n).map { _ in UInt8.random(in: 0...255) }) }
        try await harness.database.query("""
            INSERT INTO herald.apple_tokens (account_id, client_id, key_id, nonce, ciphertext, tag, jobs_exchange, message_id)
            VALUES (\(account), \(clientID), 't1', \(random(12)), \(random(40)), \(random(16)), \(harness.topology.jobsExchange), 'test')
            """, logger: harness.logger)
    }

    func tokens(_ account: String) async throws -> Int {
        let rows = try await harness.database.query("SELECT count(*)::int FROM herald.apple_tokens WHERE account_id = \(account)", logger: harness.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// apple.revoke jobs waiting in the outbox of this namespace (the account delete trigger's).
    func revocationsEnqueued() async throws -> Int {
        let rows = try await harness.database.query("""
            SELECT count(*)::int FROM herald.event_outbox WHERE exchange = \(harness.topology.jobsExchange) AND name = 'apple.revoke'
            """, logger: harness.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Outcomes of this test's notifications, in the order they were handled.
    func outcomes() async throws -> [String] {
        let rows = try await harness.database.query("""
            SELECT outcome FROM herald.apple_notifications WHERE jti LIKE \(harness.namespace + "-%") ORDER BY received_at
            """, logger: harness.logger)
        var out: [String] = []
        for try await outcome in rows.decode(String.self) { out.append(outcome) }
        return out
    }

    func notification(type: String, subject: String, email: String? = nil, issuedAt: Date = Date(),
                      key: AppleStubServer.SigningKey = .current) async throws -> String {
        try await stub.notification(audience: clientID, type: type, subject: subject, email: email, isPrivateEmail: email.map { _ in true },
                                    jwtID: "\(harness.namespace)-\(UUID().uuidString.lowercased())", issuedAt: issuedAt, key: key)
    }

    /// Signs a notification as Apple, enqueues it as the front API would, waits until it is handled.
    func deliver(type: String, subject: String? = nil, email: String? = nil, issuedAt: Date = Date()) async throws {
        let payload = try await notification(type: type, subject: subject ?? self.subject(0), email: email, issuedAt: issuedAt)
        let id = try await harness.enqueue(AppleNotificationJob(payload: payload))
        try await eventually("\(type) handled") { try await harness.ledger(id)?.0 == "completed" }
    }

    /// Removes the relay marks of `address` (the table is not namespaced).
    func forget(_ address: String) {
        let digests = relay.hasher.hashesUnderEveryKey(PrivateRelayAddresses.normalForm(address), context: PrivateRelayAddresses.hashContext)
            .map { ByteBuffer(bytes: $0.digest) }
        let (database, logger) = (harness.database, harness.logger)
        harness.onClose {
            _ = try? await database.query("DELETE FROM herald.apple_relay_addresses WHERE address_hash = ANY(\(digests)::bytea[])", logger: logger)
        }
    }
}
