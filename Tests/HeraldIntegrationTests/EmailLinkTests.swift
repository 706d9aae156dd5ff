import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldEmailCheck
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import PostgresNIO
import Testing

/// Email-link sign-in end to end: the job goes out over real SMTP (STARTTLS, AUTH) to the
/// test server; the test reads the stored message, follows its link and consumes the code.
@Suite(.needsServers) struct EmailLinkTests {
    @Test func aSignInLinkArrivesOverSMTPAndIsConsumedOnce() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let address = "Alice-\(harness.namespace)@Example.NET"
            let job = email.job(1, to: address, url: "https://app.example.com/finish?state=xyz&cart=42", linkDomain: "links.example.com")
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }

            // The envelope recipient is the normal form: the domain lower-cased.
            let normal = "Alice-\(harness.namespace)@example.net"
            let messages = email.received(to: normal)
            #expect(messages.count == 1)
            let message = try #require(messages.first)
            #expect(message.header("X-Herald-TLS") == "yes", "delivered over STARTTLS")
            #expect(message.header("X-Herald-Auth") == "yes", "after AUTH")
            #expect(message.contentType.hasPrefix("multipart/alternative"))
            #expect(message.header("From") == "\"Herald Tests\" <no-reply@herald.test>")
            #expect(message.header("Reply-To") == "support@herald.test")
            #expect(message.header("Message-ID")?.hasSuffix("@herald.test>") == true)
            #expect(message.header("Date")?.hasSuffix("+0000") == true)
            #expect(message.header("MIME-Version") == "1.0")
            #expect(message.subject == "Sign in to Herald")

            // The link: on the requested link domain, Firebase's parameters, the continue URL as sent.
            let link = try #require(message.link)
            #expect(link.scheme == "https")
            #expect(link.host == "links.example.com")
            #expect(link.path == "/__/auth/action")
            #expect(message.query("mode") == "signIn")
            #expect(message.query("continueUrl") == job.actionCodeSettings.url)
            #expect(message.query("lang") == "en")
            let code = try #require(message.query("oobCode"))
            #expect(code.count >= 22, "at least 128 bits")
            #expect(message.html.contains(code), "the HTML part carries the same link")

            // Stored only as a keyed hash.
            let rows = try await harness.database.query("SELECT code_hash, key_id, email, settings::text FROM herald.email_codes WHERE request_id = \(job.requestID)", logger: harness.logger)
            for try await (hash, keyID, stored, settings) in rows.decode((ByteBuffer, String, String, String).self) {
                #expect(hash.readableBytes == 32)
                #expect(!String(buffer: hash).contains(code))
                #expect(!settings.contains(code))
                #expect(!keyID.isEmpty)
                #expect(stored == normal)
            }

            // Consume: the wrong address fails and leaves the code usable; the right one (any case of
            // the domain) succeeds once; a code of this mode is not a reset code.
            #expect(try await email.consume("bob-\(harness.namespace)@example.net", code) == .emailMismatch)
            #expect(try await email.consume("alice-\(harness.namespace)@example.net", code) == .emailMismatch, "the local part is compared exactly")
            #expect(try await email.consume(normal, code, mode: .resetPassword) == .notFound)
            guard case .success(let consumedEmail, let mode, let continueURL, let settings) = try await email.consume("Alice-\(harness.namespace)@EXAMPLE.net", code) else {
                Issue.record("the first consume did not succeed")
                return
            }
            #expect(consumedEmail == normal)
            #expect(mode == .signIn)
            #expect(continueURL == job.actionCodeSettings.url)
            #expect(settings.linkDomain == "links.example.com")
            #expect(settings.iosBundleID == "com.example.ios")
            #expect(settings.androidPackageName == "com.example.android")
            #expect(settings.androidMinimumVersion == "12")
            #expect(settings.handleCodeInApp)
            #expect(try await email.consume(normal, code) == .alreadyUsed)
            #expect(try await email.consume(normal, String(code.reversed())) == .notFound)
            #expect(try await email.consume(normal, "short") == .notFound)

            let events = try await email.events.take(atLeast: 1)
            #expect(events.map(\.0) == ["email.sent"])
            #expect(events.first?.1["request_id"] as? String == job.requestID)
            #expect(events.first?.1["email"] as? String == Redact.email(normal))
            #expect(try await email.request(job.requestID)?.0 == "sent")
            #expect(try await email.request(job.requestID)?.2 == "smtp")
            try await worker.stop()
        }
    }

    @Test func anExpiredLinkFails() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start { $0.email.expirySeconds[.signIn] = 1 }
            let job = email.job(2)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(email.received(to: job.email).first?.query("oobCode"))
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await email.consume(job.email, code) == .expired)
            #expect(try await email.consume(job.email, code) == .expired)
            #expect(try await email.codes(job.requestID) == ["expired"])
            try await worker.stop()
        }
    }

    @Test func concurrentConsumesSucceedExactlyOnce() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let job = email.job(3)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            let code = try #require(email.received(to: job.email).first?.query("oobCode"))
            let results = try await withThrowingTaskGroup(of: EmailLinkVerifier.Result.self) { group in
                for _ in 0..<20 { group.addTask { try await email.consume(job.email, code) } }
                var out: [EmailLinkVerifier.Result] = []
                for try await result in group { out.append(result) }
                return out
            }
            #expect(results.filter { if case .success = $0 { true } else { false } }.count == 1)
            #expect(results.filter { $0 == .alreadyUsed }.count == 19)
            try await worker.stop()
        }
    }

    /// reset_password to an address without an account sends nothing, and from outside the
    /// job looks the same as one for a known address: the ledger outcome and the event.
    @Test func unknownAddressesLookLikeKnownOnes() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let known = email.address(10)
            let accounts = AccountStore(client: harness.database, logger: harness.logger)
            try await accounts.createAccount(id: "\(harness.namespace)-acct", provider: "password", providerUID: known.uppercased())
            let unknown = email.address(11)
            let jobs = [email.job(10, mode: .resetPassword, to: known), email.job(11, mode: .resetPassword, to: unknown)]
            let ids = [try await harness.enqueue(jobs[0]), try await harness.enqueue(jobs[1])]
            try await eventually("both done") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }

            #expect(email.received(to: unknown).isEmpty, "nothing sent to an unknown address")
            let message = try #require(email.received(to: known).first)
            #expect(message.subject == "Reset your password for Herald")
            #expect(message.query("mode") == "resetPassword")
            let code = try #require(message.query("oobCode"))
            #expect(try await email.consume(known, code) == .notFound, "a reset code is not a sign-in code")
            guard case .success(_, .resetPassword, _, _) = try await email.consume(known, code, mode: .resetPassword) else {
                Issue.record("the reset code was not consumed")
                return
            }

            let events = try await email.events.take(atLeast: 2).sorted { ($0.1["request_id"] as? String ?? "") < ($1.1["request_id"] as? String ?? "") }
            #expect(events.map(\.0) == ["email.sent", "email.sent"])
            #expect(Set(events[0].1.keys) == Set(events[1].1.keys), "the same fields for both")
            #expect(try await email.request(jobs[1].requestID)?.0 == "no_account")
            #expect(try await email.codes(jobs[1].requestID).isEmpty, "no code minted for an unknown address")

            // sign_in for an unknown address is sent (the sign-in creates the account).
            let signIn = email.job(12)
            let signInID = try await harness.enqueue(signIn)
            try await eventually("sign-in sent") { try await harness.ledger(signInID)?.0 == "completed" }
            #expect(email.received(to: signIn.email).count == 1)
            try await worker.stop()
        }
    }

    @Test func notifyModeSendsTheNoAccountNoteWithoutALink() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start { $0.email.unknownAddress = .notify }
            let job = email.job(20, mode: .verifyEmail)
            let id = try await harness.enqueue(job)
            try await eventually("done") { try await harness.ledger(id)?.0 == "completed" }
            let message = try #require(email.received(to: job.email).first)
            #expect(message.subject == "Your Herald request")
            #expect(message.link == nil)
            #expect(!message.text.contains("oobCode"))
            #expect(try await email.request(job.requestID)?.0 == "noted")
            #expect(try await email.events.take(atLeast: 1).map(\.0) == ["email.sent"])
            try await worker.stop()
        }
    }

    @Test func localisedAndDeduplicated() async throws {
        // The duplicate retries (email_in_progress) while the first is at the SMTP server: its
        // tries must outlast that send under the parallel suites' load (3 tries in 0.7 s did
        // not, and it was dead-lettered), as production's retry delays do.
        try await withHarness(retryDelays: [300], maxAttempts: 30) { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            var job = email.job(30, locale: "de-CH")
            job.actionCodeSettings.dynamicLinkDomain = "example.page.link"
            // The same request twice (two message ids): one email.
            let first = try await harness.enqueue(job)
            let second = try await harness.enqueue(job)
            try await eventually("both done") { try await harness.statuses([first, second]).values.filter { $0 == "completed" }.count == 2 }
            let messages = email.received(to: job.email)
            #expect(messages.count == 1)
            #expect(messages.first?.subject == "Anmeldung bei Herald – Ihr Link")
            #expect(messages.first?.link?.host == "auth.example.com", "the default link domain; dynamic_link_domain is ignored")
            #expect(messages.first?.query("lang") == "de-CH")
            try await worker.stop()
        }
    }
}
