import Foundation
import HeraldStubs
import PostgresNIO
import Synchronization
import Testing
@testable import HeraldEmail
@testable import HeraldRuntime

/// Mail to Apple's private relay over the real SMTP server: it goes from the sender registered
/// with Apple (`email.apple_relay.sender`), and nothing goes to an address Apple stopped
/// forwarding to (marked in `herald.apple_relay_addresses`, as herald-apple does on
/// `email-disabled`) until it forwards again.
@Suite(.needsServers) struct EmailAppleRelayTests {
    static let relaySender = "Herald Relay <relay@mail.herald.test>"

    /// A relay address of this test (`behaviour` is the SMTP server's local-part prefix).
    static func relayAddress(_ email: EmailFixture, _ n: Int, behaviour: String = "user") -> String {
        email.address(n, behaviour: behaviour, domain: PrivateRelayAddresses.domain)
    }

    /// Messages the SMTP server stored for `address`, in any case.
    static func delivered(to address: String) -> Int {
        MaildirMessage.files(in: EmailFixture.maildir).count { path in
            guard let raw = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
            return MaildirMessage.envelopeRecipient(raw)?.lowercased() == address.lowercased()
        }
    }

    @Test func relayMailGoesFromTheRegisteredSenderAndOtherMailFromTheUsualOne() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start { $0.email.appleRelay.sender = Self.relaySender }
            let relay = email.job(1, to: Self.relayAddress(email, 1))
            let plain = email.job(2)
            let ids = [try await harness.enqueue(relay), try await harness.enqueue(plain)]
            try await eventually("both sent") { try await harness.statuses(ids).filter { $0.value == "completed" }.count == 2 }

            let toRelay = try #require(email.received(to: relay.email).first)
            #expect(toRelay.header("From") == "\"Herald Relay\" <relay@mail.herald.test>")
            #expect(toRelay.header("X-Herald-Envelope-From") == "relay@mail.herald.test", "MAIL FROM is the registered sender too (SPF is checked on it)")
            #expect(toRelay.header("Message-ID")?.hasSuffix("@mail.herald.test>") == true)
            let toPlain = try #require(email.received(to: plain.email).first)
            #expect(toPlain.header("From") == "\"Herald Tests\" <no-reply@herald.test>")
            #expect(toPlain.header("X-Herald-Envelope-From") == "no-reply@herald.test")
            try await worker.stop()
        }
    }

    @Test func withoutARelaySenderRelayMailGoesFromTheUsualSender() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let relay = email.job(1, to: Self.relayAddress(email, 1))
            let id = try await harness.enqueue(relay)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            #expect(email.received(to: relay.email).first?.header("X-Herald-Envelope-From") == "no-reply@herald.test")
            try await worker.stop()
        }
    }

    /// email-disabled: refused with `apple_relay_disabled` (the request `failed`, `email.failed`,
    /// nothing at the SMTP server), whatever the address's case; an older email-enabled changes
    /// nothing; a newer one lets mail through again. The table holds no address in clear.
    @Test func aDisabledRelayAddressGetsNothingUntilItIsEnabledAgain() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let relay = try RelayMarks(harness)
            let worker = try await email.start { $0.email.appleRelay.sender = Self.relaySender }
            let address = Self.relayAddress(email, 1)
            let disabledAt = Date()
            #expect(try await relay.mark(address, deliverable: false, at: disabledAt))

            let first = email.job(1, to: address)
            let shouting = email.job(2, to: address.uppercased())
            let other = email.job(3, to: Self.relayAddress(email, 3))
            let ids = [try await harness.enqueue(first), try await harness.enqueue(shouting), try await harness.enqueue(other)]
            try await eventually("decided") {
                let statuses = try await harness.statuses(ids)
                return statuses[ids[0]] == "rejected" && statuses[ids[1]] == "rejected" && statuses[ids[2]] == "completed"
            }
            #expect(try await relay.ledgerReason(ids[0]) == "apple_relay_disabled")
            for job in [first, shouting] {
                let request = try #require(try await email.request(job.requestID))
                #expect(request.0 == "failed")
                #expect(request.1 == "apple_relay_disabled")
                #expect(try await email.codes(job.requestID).isEmpty, "no code was minted")
            }
            #expect(Self.delivered(to: address) == 0)
            #expect(email.received(to: other.email).count == 1, "another relay address is not affected")
            let failed = try await email.events.take { $0.filter { $0.0 == "email.failed" }.count >= 2 }.filter { $0.0 == "email.failed" }
            #expect(Set(failed.compactMap { $0.1["request_id"] as? String }) == [first.requestID, shouting.requestID])
            #expect(failed.allSatisfy { $0.1["reason"] as? String == "apple_relay_disabled" })
            #expect(failed.allSatisfy { ($0.1["email"] as? String)?.contains("***@privaterelay.appleid.com") == true }, "the address is masked")
            #expect(try await relay.rowsContainingInClear(address) == 0, "only the keyed hash is stored")

            // A notification older than the marking is ignored: still nothing.
            #expect(try await relay.mark(address, deliverable: true, at: disabledAt.addingTimeInterval(-60)) == false)
            let stale = email.job(4, to: address)
            let staleID = try await harness.enqueue(stale)
            try await eventually("refused again") { try await harness.ledger(staleID)?.0 == "rejected" }

            // A newer email-enabled: mail goes out again, once.
            #expect(try await relay.mark(address, deliverable: true, at: disabledAt.addingTimeInterval(1)))
            let again = email.job(5, to: address)
            let againID = try await harness.enqueue(again)
            try await eventually("sent") { try await harness.ledger(againID)?.0 == "completed" }
            #expect(Self.delivered(to: address) == 1)
            #expect(email.received(to: address).first?.header("X-Herald-Envelope-From") == "relay@mail.herald.test")
            try await worker.stop()
        }
    }

    /// A try waiting in a delay queue (the SMTP server answered 451) when Apple stops forwarding:
    /// its retry sends nothing, and the request and its pending code end `failed`.
    @Test func aRetryAfterTheRelayWasDisabledEndsTheRequest() async throws {
        try await withHarness(retryDelays: [4_000]) { harness in
            let email = try await EmailFixture(harness)
            let relay = try RelayMarks(harness)
            let worker = try await email.start()
            let job = email.job(1, to: Self.relayAddress(email, 1, behaviour: "flaky451"))
            let id = try await harness.enqueue(job)
            try await eventually("first try failed") { try await email.request(job.requestID)?.0 == "retrying" }
            #expect(try await relay.mark(job.email, deliverable: false, at: Date()))
            try await eventually("refused") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(try await harness.ledger(id)?.1 == 2, "refused on its second try")
            #expect(try await email.request(job.requestID)?.1 == "apple_relay_disabled")
            #expect(try await email.codes(job.requestID).allSatisfy { $0 != "pending" }, "no link of the request stays usable")
            #expect(email.received(to: job.email).isEmpty)
            try await worker.stop()
        }
    }

    @Test func theRelaySenderIsCheckedAtStart() throws {
        let configured = try HeraldConfiguration(source: ConfigSource(values: ["email.apple_relay.sender": "Relay <relay@mail.example.com>"]), sections: [EmailConfiguration.self])
        #expect(configured.email.sender(to: "abc@privaterelay.appleid.com") == "Relay <relay@mail.example.com>")
        #expect(configured.email.sender(to: "abc@example.com") == configured.email.sender)
        let unset = try HeraldConfiguration(source: ConfigSource(values: [:]), sections: [EmailConfiguration.self])
        #expect(unset.email.sender(to: "abc@PrivateRelay.AppleID.com") == unset.email.sender)
        #expect(unset.email.effectiveValues["email.apple_relay.sender"] as? String == unset.email.sender)
        for bad in ["not an address", "Evil\nBcc: x@y.com", "someone@privaterelay.appleid.com"] {
            #expect(throws: ConfigError.self, "\(bad)") {
                do {
                    _ = try HeraldConfiguration(source: ConfigSource(values: ["email.apple_relay.sender": bad]), sections: [EmailConfiguration.self])
                } catch let error as ConfigError {
                    #expect(error.key == "email.apple_relay.sender")
                    throw error
                }
            }
        }
    }
}

/// Marks relay addresses as herald-apple does, and removes this test's marks when the harness closes.
final class RelayMarks: Sendable {
    let harness: Harness
    let relay: PrivateRelayAddresses
    private let marked = Mutex<[String]>([])

    init(_ harness: Harness) throws {
        self.harness = harness
        relay = PrivateRelayAddresses(hasher: SecretHasher(keyRing: try harness.configuration.secrets.keyRing()))
        harness.onClose { await self.close() }
    }

    /// Returns whether the stored state changed.
    func mark(_ address: String, deliverable: Bool, at time: Date) async throws -> Bool {
        marked.withLock { $0.append(address) }
        let (relay, logger) = (relay, harness.logger)
        return try await harness.database.withTransaction(logger: logger) { connection in
            try await relay.mark(address, deliverable: deliverable, eventTime: time, on: connection, logger: logger)
        }
    }

    func ledgerReason(_ messageID: String) async throws -> String? {
        let rows = try await harness.database.query("SELECT reason FROM herald.job_runs WHERE message_id = \(messageID)", logger: harness.logger)
        for try await reason in rows.decode(String?.self) { return reason }
        return nil
    }

    /// Rows of the relay table whose bytes contain the address (either case) or its local part.
    func rowsContainingInClear(_ address: String) async throws -> Int {
        let local = String(address.prefix { $0 != "@" })
        let rows = try await harness.database.query("""
            SELECT count(*)::int FROM herald.apple_relay_addresses r
             WHERE position(convert_to(\(local), 'UTF8') IN r.address_hash) > 0
                OR position(lower(\(local)) IN r::text) > 0
            """, logger: harness.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    func close() async {
        for address in marked.withLock({ $0 }) {
            let digests = relay.hasher.hashesUnderEveryKey(PrivateRelayAddresses.normalForm(address), context: PrivateRelayAddresses.hashContext)
                .map { ByteBuffer(bytes: $0.digest) }
            _ = try? await harness.database.query("DELETE FROM herald.apple_relay_addresses WHERE address_hash = ANY(\(digests)::bytea[])", logger: harness.logger)
        }
    }
}
