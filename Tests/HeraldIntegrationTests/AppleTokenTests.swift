import Crypto
import Foundation
@testable import HeraldApple
@testable import HeraldAppleCheck
import HeraldClient
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// `herald-apple`'s `apple.token` and `apple.revoke` against the real RabbitMQ and PostgreSQL
/// and a local Apple that checks the client secret as Apple does and accepts each code once.
@Suite(.needsServers) struct AppleTokenTests {
    @Test func aTokenIsStoredSealedThenRevokedWithOneCallEach() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let worker = try await apple.start()
            let (account, subject) = try await apple.account(1)
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let tokenID = try await harness.enqueue(AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code))
            try await eventually("stored") { try await harness.ledger(tokenID)?.0 == "completed" }
            #expect(apple.endpoints.refusals.isEmpty, "\(apple.endpoints.refusals)")
            #expect(apple.endpoints.exchanges == 1)
            let issued = try #require(apple.endpoints.refreshTokens(of: subject).first)
            let row = try #require(try await apple.tokenRow(account))
            #expect(row.0 == "t1")
            #expect(row.1.count == 12 && row.3.count == 16)
            // No byte run of the token in clear: not the whole, not any 8-byte piece of it.
            let clear = Array(issued.token.utf8)
            let stored = row.1 + row.2 + row.3
            for start in stride(from: 0, to: clear.count - 8, by: 1) {
                let piece = clear[start..<start + 8]
                #expect(!stored.indices.dropLast(7).contains { Array(stored[$0..<$0 + 8]) == Array(piece) })
            }
            #expect(try await apple.record(tokenID)?.state == .stored)
            // What support sees: the stored token by client and key id, never the token; the sub shortened.
            let shownOutput = try await runHeraldctl(["verify", "show-apple", account, "--output", "json"], namespace: harness.namespace)
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(shownOutput.utf8)) as? [String: Any])
            #expect(shown["account_exists"] as? Bool == true)
            #expect(shown["apple_sub"] as? String == "\(subject.prefix(6))…\(subject.suffix(4))")
            let shownTokens = try #require(shown["tokens"] as? [[String: Any]])
            #expect(shownTokens.count == 1 && shownTokens.first?["client_id"] as? String == apple.clientID && shownTokens.first?["key_id"] as? String == "t1")
            #expect((shown["jobs"] as? [[String: Any]])?.first?["state"] as? String == "stored")
            #expect(!shownOutput.contains(issued.token) && !shownOutput.contains(subject) && !shownOutput.contains(code))

            let revokeID = try await harness.enqueue(AppleRevokeJob(accountID: account, clientID: apple.clientID))
            try await eventually("revoked") { try await harness.ledger(revokeID)?.0 == "completed" }
            #expect(apple.endpoints.revocations == 1)
            #expect(apple.endpoints.calls(.revoke) == 1)
            #expect(apple.endpoints.refreshTokens(of: subject).first?.revoked == true)
            #expect(try await apple.tokenRow(account) == nil)
            #expect(try await apple.record(revokeID)?.state == .revoked)
            let events = try await apple.events.take(atLeast: 2)
            #expect(EventTap.namesByOccurrence(events) == ["apple.token.stored", "apple.token.revoked"])
            #expect(events.allSatisfy { $0.1["account_id"] as? String == account && $0.1["client_id"] as? String == apple.clientID })
            #expect(apple.endpoints.exchanges == 1 && apple.endpoints.calls(.token) == 1)
            try await worker.stop()
        }
    }

    /// A try that sent the code and died before recording Apple's answer: the redelivery finds
    /// the exchange in flight with no answer and ends `uncertain` without calling Apple; a copy
    /// of a finished job and another job with the same code call Apple no more either.
    @Test func aRedeliveredTokenJobNeverExchangesTwice() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let (account, subject) = try await apple.account(1)
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let job = AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code)
            // The first try's record: `calling` by a worker whose presence lock is gone.
            let crashed = UUID().uuidString.lowercased()
            let decision = try await AppleStore.prepare(.init(
                messageID: crashed, operation: .token, accountID: account, clientID: apple.clientID,
                codeHash: AppleStore.codeHash(job.authorizationCode), step: .exchange, ownerKey: Int64.random(in: 1..<Int64.max)),
                client: harness.database, logger: harness.logger)
            #expect(decision == .call(uncertain: false))
            let worker = try await apple.start()
            _ = try await harness.enqueue(job, messageID: crashed)
            try await eventually("ended") { try await harness.ledger(crashed)?.0 == "rejected" }
            let record = try #require(try await apple.record(crashed))
            #expect(record.state == .uncertain)
            #expect(record.reason?.hasPrefix("exchange_uncertain") == true)
            #expect(record.uncertainCalls == 1)

            // Another job with the same code: refused before any call.
            let again = try await harness.enqueue(job)
            try await eventually("refused") { try await harness.ledger(again)?.0 == "rejected" }
            #expect(try await apple.record(again)?.error == "authorization_code_reused")

            // A fresh code, exchanged once; the same message published again is a duplicate.
            let fresh = AppleTokenJob(accountID: account, clientID: apple.clientID,
                                      authorizationCode: try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID))
            let id = try await harness.enqueue(fresh)
            try await eventually("stored") { try await harness.ledger(id)?.0 == "completed" }
            _ = try await harness.enqueue(fresh, messageID: id)
            try await Task.sleep(for: .milliseconds(500))
            #expect(apple.endpoints.calls(.token) == 1, "only the fresh code reached Apple, once")
            #expect(apple.endpoints.exchanges == 1)
            let events = try await apple.events.take(atLeast: 3)
            #expect(events.filter { $0.0 == "apple.token.failed" }.compactMap { $0.1["reason"] as? String }.sorted()
                    == ["authorization_code_reused", "exchange_uncertain"])
            try await worker.stop()
        }
    }

    @Test func invalidGrantEndsTheJobFailedWithoutARetry() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let worker = try await apple.start()
            let (account, subject) = try await apple.account(1)
            // A code used already (as a replay of the app's request would be).
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID, issuedAt: Date().addingTimeInterval(-301))
            let id = try await harness.enqueue(AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code))
            try await eventually("ended") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(try await harness.ledger(id)?.1 == 1, "one attempt")
            let record = try #require(try await apple.record(id))
            #expect(record.state == .failed)
            #expect(record.error == "invalid_grant")
            #expect(record.httpStatus == 400)
            #expect(apple.endpoints.calls(.token) == 1)
            #expect(apple.endpoints.refusals == ["invalid_grant: code expired"])
            #expect(try await apple.tokenRow(account) == nil)
            let events = try await apple.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["apple.token.failed"])
            #expect(events.first?.1["reason"] as? String == "apple:invalid_grant")
            try await worker.stop()
        }
    }

    @Test func appleDownOrHangingIsRetriedThroughTheDelayTiersThenStored() async throws {
        try await withHarness(maxAttempts: 5) { harness in
            let apple = try await AppleTokenFixture(harness)
            apple.endpoints.fail(.token, with: .status(503))
            apple.endpoints.fail(.token, with: .hang)
            let worker = try await apple.start { $0.apple.tokens.timeoutMilliseconds = 1500 }
            let (account, subject) = try await apple.account(1)
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let id = try await harness.enqueue(AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code))
            try await eventually("stored") { try await harness.ledger(id)?.0 == "completed" }
            #expect(try await harness.ledger(id)?.1 == 3)
            #expect(apple.endpoints.calls(.token) == 3)
            #expect(apple.endpoints.exchanges == 1)
            let record = try #require(try await apple.record(id))
            #expect(record.state == .stored)
            #expect(record.calls == 3)
            #expect(record.uncertainCalls == 1, "the call that hung may have reached Apple")
            let attempts = try await AttemptLog.apple.read(id, client: harness.database, logger: harness.logger)
            #expect(attempts.map(\.result) == [.transient, .timeout, .accepted])
            #expect(try await apple.tokenRow(account) != nil)
            try await worker.stop()
        }
    }

    /// Apple exchanged the code and the answer was lost (the call timed out): the retry is
    /// refused with invalid_grant, and the job ends `uncertain`, not `failed`, because the
    /// code may be spent on a refresh token Herald never saw.
    @Test func anAnswerLostThenInvalidGrantEndsUncertain() async throws {
        try await withHarness(maxAttempts: 5) { harness in
            let apple = try await AppleTokenFixture(harness)
            apple.endpoints.fail(.token, with: .answerLost)
            let worker = try await apple.start { $0.apple.tokens.timeoutMilliseconds = 1500 }
            let (account, subject) = try await apple.account(1)
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let id = try await harness.enqueue(AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code))
            try await eventually("ended") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(apple.endpoints.exchanges == 1, "the lost answer's exchange")
            #expect(apple.endpoints.calls(.token) == 2)
            let record = try #require(try await apple.record(id))
            #expect(record.state == .uncertain)
            #expect(record.error == "exchange_uncertain")
            #expect(record.uncertainCalls == 1)
            #expect(try await apple.tokenRow(account) == nil)
            let events = try await apple.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["apple.token.failed"])
            #expect((events.first?.1["reason"] as? String)?.hasPrefix("exchange_uncertain") == true)
            try await worker.stop()
        }
    }

    /// The front API deletes the account, nothing else: the deletion's transaction enqueues the
    /// revocation, herald-apple revokes at Apple and deletes the token; account.deleted goes out.
    @Test func deletingAnAppleLinkedAccountRevokesItsToken() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let accountEvents = try await EventTap(harness, channel: "account")
            let worker = try await apple.start()
            let (account, subject) = try await apple.account(1)
            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let id = try await harness.enqueue(AppleTokenJob(accountID: account, clientID: apple.clientID, authorizationCode: code))
            try await eventually("stored") { try await harness.ledger(id)?.0 == "completed" }

            let accounts = HeraldAccounts(database: harness.database, logger: harness.logger, topology: harness.topology)
            #expect(try await accounts.deleteAccount(id: account))
            #expect(try await accounts.account(account) == nil)
            try await eventually("revoked") { apple.endpoints.revocations == 1 }
            try await eventually("token deleted") { try await apple.tokenRow(account) == nil }
            #expect(apple.endpoints.refreshTokens(of: subject).map(\.revoked) == [true])
            let events = try await apple.events.take(atLeast: 2)
            #expect(EventTap.namesByOccurrence(events) == ["apple.token.stored", "apple.token.revoked"])
            let deleted = try await accountEvents.take(atLeast: 1)
            #expect(deleted.map(\.0) == ["account.deleted"])
            #expect(deleted.first?.1["account_id"] as? String == account)
            #expect(deleted.first?.1["reason"] as? String == "deleted")
            #expect(try await accounts.deleteAccount(id: account) == false)
            try await Task.sleep(for: .milliseconds(300))
            #expect(apple.endpoints.calls(.revoke) == 1)
            try await worker.stop()
        }
    }

    @Test func aRevocationWithNothingStoredAndNoCodeCompletesWithItsReason() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let worker = try await apple.start()
            let (account, _) = try await apple.account(1)
            let id = try await harness.enqueue(AppleRevokeJob(accountID: account, clientID: apple.clientID))
            try await eventually("ended") { try await harness.ledger(id)?.0 == "completed" }
            let record = try #require(try await apple.record(id))
            #expect(record.state == .nothing)
            #expect(record.reason?.hasPrefix("nothing_to_revoke") == true)
            #expect(apple.endpoints.calls(.revoke) == 0 && apple.endpoints.calls(.token) == 0)
            try await worker.stop()
        }
    }

    /// A client-secret configuration herald-apple cannot use stops it at start with the key
    /// named and nothing of the key's content.
    @Test func aBadClientSecretConfigurationStopsTheWorkerNamingTheKey() async throws {
        try await withHarness() { harness in
            let apple = try await AppleTokenFixture(harness)
            let garbage = "-----BEGIN PRIVATE KEY-----\nTk9UQUtFWV9zZWNyZXRfY29udGVudA==\n-----END PRIVATE KEY-----"
            func failure(_ configure: (inout HeraldConfiguration) -> Void) -> ConfigError? {
                do {
                    _ = try AppleHandler(configuration: apple.configuration(configure))
                    return nil
                } catch {
                    return error as? ConfigError
                }
            }
            let bad = try #require(failure { $0.apple.tokens.privateKey = garbage })
            #expect(bad.key == "apple.private_key")
            #expect(!bad.description.contains("Tk9UQUtFWV9zZWNyZXRfY29udGVudA"))
            #expect(failure { $0.apple.tokens.privateKey = "" }?.key == "apple.private_key")
            #expect(failure { $0.apple.tokens.teamID = "" }?.key == "apple.team_id")
            #expect(failure { $0.apple.tokens.keyID = "" }?.key == "apple.key_id")
            #expect(failure { $0.apple.tokens.tokenKeys = "" }?.key == "apple.token_keys")
            #expect(failure { $0.apple.tokens.tokenKeys = "t1:c2hvcnQ=" }?.key == "apple.token_keys")
            #expect(failure { $0.apple.clientIDs = [] }?.key == "apple.client_ids")
            for (key, value) in [("apple.client_secret_lifetime_seconds", "15777001"), ("apple.team_id", "team"), ("apple.key_id", "KEY")] {
                #expect(throws: ConfigError.self) { _ = try AppleConfiguration(source: ConfigSource(values: [key: value])) }
                do { _ = try AppleConfiguration(source: ConfigSource(values: [key: value])) } catch let error as ConfigError { #expect(error.key == key) }
            }

            // The executable: exit 78 with the key named, the key's content nowhere in its log.
            let keyFile = NSTemporaryDirectory() + "herald-apple-\(harness.namespace).p8"
            try garbage.write(toFile: keyFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let process = try WorkerProcess("herald-apple", namespace: harness.namespace, environment: [
                "HERALD_APPLE_CLIENT_IDS": apple.clientID, "HERALD_APPLE_TEAM_ID": apple.teamID, "HERALD_APPLE_KEY_ID": apple.keyID,
                "HERALD_APPLE_PRIVATE_KEY_FILE": keyFile, "HERALD_APPLE_TOKEN_KEYS": apple.tokenKeys,
            ])
            #expect(await process.waitForExit(timeout: .seconds(10)) == 78)
            #expect(process.log.contains("apple.private_key"))
            #expect(!process.log.contains("Tk9UQUtFWV9zZWNyZXRfY29udGVudA"))
        }
    }
}

