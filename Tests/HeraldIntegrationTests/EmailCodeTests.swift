import AMQP
import Foundation
@testable import HeraldEmail
@testable import HeraldEmailCheck
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import PostgresNIO
import Testing

/// One-time email codes (`email.code`) end to end: the job through a running herald-email, the
/// email as the real SMTP server stored it, the code read from it and checked with
/// ``EmailCodeVerifier``: once; wrong codes up to the address's lockout (the right code refused
/// while it lasts, and no code mailed); a code's own tries; expiry; reuse inside the resend
/// interval and force_resend; a malformed job dead-lettered with a reason naming its field.
@Suite(.needsServers) struct EmailCodeTests {
    /// The email fixture, a verifier, and this test's code rows removed when the harness closes.
    struct Codes {
        let email: EmailFixture
        let harness: Harness
        let verifier: EmailCodeVerifier

        init(_ harness: Harness) async throws {
            self.harness = harness
            email = try await EmailFixture(harness)
            verifier = EmailCodeVerifier(client: harness.database, hasher: SecretHasher(keyRing: try harness.configuration.secrets.keyRing()))
            let pattern = "%-\(harness.namespace)-%"
            harness.onClose {
                let (database, logger) = (harness.database, harness.logger)
                _ = try? await database.query("DELETE FROM herald.email_otp_verifications WHERE email LIKE \(pattern)", logger: logger)
                _ = try? await database.query("DELETE FROM herald.email_otp_guess_failures WHERE email LIKE \(pattern)", logger: logger)
                _ = try? await database.query("DELETE FROM herald.email_otp_codes WHERE email LIKE \(pattern)", logger: logger)
            }
        }

        func job(_ n: Int, purpose: EmailCodeJob.Purpose = .signIn, locale: String? = "en", force: Bool = false) -> EmailCodeJob {
            EmailCodeJob(verificationID: "\(harness.namespace)-c\(n)", email: email.address(n), purpose: purpose, locale: locale, forceResend: force)
        }

        /// Enqueues `job` and waits for the runner's verdict in the ledger.
        @discardableResult
        func run(_ job: EmailCodeJob, until status: String = "completed") async throws -> String {
            let id = try await harness.enqueue(job)
            try await eventually("\(job.verificationID) \(status)") { try await harness.ledger(id)?.0 == status }
            return id
        }

        /// The codes mailed to `address`, oldest first: the digits on the text part's own line.
        func mailedCodes(to address: String) -> [String] {
            email.received(to: address).compactMap { message in
                message.text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                    .first { $0.count >= 4 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }
            }
        }

        func check(_ address: String, _ code: String, purpose: EmailCodeJob.Purpose = .signIn) async throws -> EmailCodeVerifier.Result {
            try await verifier.verify(email: address, purpose: purpose, code: code, logger: harness.logger)
        }

        /// `heraldctl ARGUMENTS` with this test's namespace, database and HMAC keys: its output.
        func heraldctl(_ arguments: [String]) async throws -> String {
            var environment = ProcessInfo.processInfo.environment
            environment["HERALD_AMQP_URL"] = TestEnvironment.amqpURL
            environment["HERALD_DATABASE_URL"] = TestEnvironment.databaseURL
            environment["HERALD_AMQP_NAMESPACE"] = harness.namespace
            environment["HERALD_DATABASE_TLS"] = "disable"
            environment["HERALD_SECRETS_HMAC_KEYS_FILE"] = TestEnvironment.hmacKeysFile
            return try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", arguments, environment: environment)
        }

        /// A code other than `code` of the same length.
        static func wrong(_ code: String) -> String {
            String(code.map { $0 == "9" ? "0" : Character(String(Int(String($0))! + 1)) })
        }
    }

    @Test func aCodeIsMailedAndChecksOnceForItsAddressAndPurpose() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start()
            let job = codes.job(1, locale: "de")
            try await codes.run(job)

            let message = try #require(codes.email.received(to: job.email).first, "the code email reached the SMTP server")
            #expect(message.subject == "Ihr Bestätigungscode für Herald", "the de template")
            let code = try #require(codes.mailedCodes(to: job.email).first)
            #expect(code.count == 6)
            #expect(message.html.contains(code))
            #expect(!message.subject.contains(code), "never in the subject")

            // Bound to address and purpose: the same digits are worth nothing elsewhere.
            #expect(try await codes.check(job.email, code, purpose: .mfaSignIn) == .notFound)
            #expect(try await codes.check(codes.email.address(2), code) == .notFound)
            // The address in normal form: its domain compared case-insensitively.
            #expect(try await codes.check(job.email.replacingOccurrences(of: "@example.net", with: "@Example.NET"), code)
                    == .verified(email: job.email, purpose: .signIn))
            #expect(try await codes.check(job.email, code) == .alreadyUsed, "single use")

            let events = try await codes.email.events.take(atLeast: 1)
            let sent = try #require(events.first { $0.0 == "email.code_sent" })
            #expect(sent.1["verification_id"] as? String == job.verificationID)
            #expect(sent.1["purpose"] as? String == "sign_in")
            #expect((sent.1["email"] as? String)?.contains(job.email) == false, "masked")

            // Only the keyed hash is stored.
            let rows = try await harness.database.query("""
                SELECT encode(code_hash, 'hex'), key_id FROM herald.email_otp_codes WHERE email = \(job.email)
                """, logger: harness.logger)
            for try await (hash, keyID) in rows.decode((String, String).self) {
                #expect(hash.count == 64 && !hash.contains(code) && !keyID.isEmpty)
            }
            try await worker.stop()
        }
    }

    /// `email.code.guessing.max_failures` wrong codes lock the address: the right code is refused
    /// while the lock lasts, and no new code is mailed (`email.code_refused`, `locked_out`).
    @Test func wrongCodesLockTheAddressOutEvenForTheRightCode() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start {
                $0.email.code.maxAttempts = 10
                $0.email.code.guessing.maxFailures = 3
                $0.email.code.guessing.lockoutSeconds = 600
                $0.email.code.guessing.maxLockoutSeconds = 600
            }
            let job = codes.job(1)
            try await codes.run(job)
            let code = try #require(codes.mailedCodes(to: job.email).first)
            let wrong = Codes.wrong(code)

            #expect(try await codes.check(job.email, wrong) == .wrongCode(attemptsLeft: 9))
            // Another purpose's wrong code counts toward the same address's lock.
            try await codes.run(codes.job(1, purpose: .mfaSignIn).withID("\(harness.namespace)-c1-mfa"))
            let mfa = try #require(codes.mailedCodes(to: job.email).last)
            #expect(try await codes.check(job.email, Codes.wrong(mfa), purpose: .mfaSignIn) == .wrongCode(attemptsLeft: 9))
            guard case .lockedOut(let seconds) = try await codes.check(job.email, wrong) else {
                Issue.record("the third wrong code did not lock the address")
                return
            }
            #expect(seconds > 500 && seconds <= 600)
            guard case .lockedOut = try await codes.check(job.email, code) else {
                Issue.record("the right code was accepted while the address is locked")
                return
            }

            // No code is mailed to a locked address.
            let before = codes.email.received(to: job.email).count
            try await codes.run(codes.job(1, force: true).withID("\(harness.namespace)-c1-again"), until: "rejected")
            #expect(codes.email.received(to: job.email).count == before)
            let events = try await codes.email.events.take(atLeast: 3)
            let refused = try #require(events.first { $0.0 == "email.code_refused" })
            #expect(refused.1["reason"] as? String == "locked_out")

            // When the lock has passed (made to pass here), the right code still works and forgets the failures.
            try await harness.database.query("""
                UPDATE herald.email_otp_guess_failures SET locked_until = now() - interval '1 second' WHERE email = \(job.email)
                """, logger: harness.logger)
            #expect(try await codes.check(job.email, code) == .verified(email: job.email, purpose: .signIn))
            let left = try await harness.database.query("SELECT count(*)::int FROM herald.email_otp_guess_failures WHERE email = \(job.email)",
                                                        logger: harness.logger)
            for try await count in left.decode(Int.self) { #expect(count == 0) }
            try await worker.stop()
        }
    }

    /// A code dies after `email.code.max_attempts` wrong tries; an expired code is refused.
    @Test func aCodeDiesAfterItsTriesAndExpires() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start { $0.email.code.maxAttempts = 2 }
            let dying = codes.job(1)
            try await codes.run(dying)
            let code = try #require(codes.mailedCodes(to: dying.email).first)
            #expect(try await codes.check(dying.email, Codes.wrong(code)) == .wrongCode(attemptsLeft: 1))
            #expect(try await codes.check(dying.email, Codes.wrong(code)) == .wrongCode(attemptsLeft: 0))
            #expect(try await codes.check(dying.email, code) == .tooManyAttempts)

            let expiring = codes.job(2)
            try await codes.run(expiring)
            let other = try #require(codes.mailedCodes(to: expiring.email).first)
            // Its expiry passed (the shortest a job may ask for is a minute).
            try await harness.database.query("""
                UPDATE herald.email_otp_codes SET expires_at = now() - interval '1 second' WHERE email = \(expiring.email)
                """, logger: harness.logger)
            #expect(try await codes.check(expiring.email, other) == .expired)
            #expect(try await codes.check(expiring.email, other) == .expired)
            try await worker.stop()
        }
    }

    /// A second request inside the resend interval mails nothing (the first code answers it);
    /// force_resend mails a fresh code and the earlier one stops working.
    @Test func aResendInsideTheIntervalReusesAndForceResendReplaces() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start { $0.email.code.resendIntervalSeconds = 600 }
            let first = codes.job(1)
            try await codes.run(first)
            try await codes.run(codes.job(1).withID("\(harness.namespace)-c1-b"))
            #expect(codes.email.received(to: first.email).count == 1, "reused: no second email")

            try await codes.run(codes.job(1, force: true).withID("\(harness.namespace)-c1-c"))
            try await eventually("second email") { codes.email.received(to: first.email).count == 2 }
            let mailed = codes.mailedCodes(to: first.email)
            #expect(mailed.count == 2)
            if mailed[0] != mailed[1] {
                #expect(try await codes.check(first.email, mailed[0]) == .wrongCode(attemptsLeft: 4), "replaced by the resend")
            }
            #expect(try await codes.check(first.email, mailed[1]) == .verified(email: first.email, purpose: .signIn))
            try await worker.stop()
        }
    }

    /// What support runs: `heraldctl verify email-code` checks a code (a wrong one exits non-zero
    /// and counts), `heraldctl verify show-email` shows the verification and its code's tries,
    /// never the code.
    @Test func heraldctlChecksACodeAndShowsTheVerification() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start()
            let job = codes.job(1, purpose: .mfaSignIn)
            try await codes.run(job)
            let code = try #require(codes.mailedCodes(to: job.email).first)

            let wrong = await #expect(throws: ChildProcessError.self) {
                _ = try await codes.heraldctl(["verify", "email-code", job.email, Codes.wrong(code), "--purpose", "mfa_sign_in"])
            }
            #expect(wrong?.description.contains("exited 1") == true, "the failure exit code, not a configuration error")
            #expect(wrong?.description.contains("wrong_code attempts_left=4") == true, "\(wrong?.description ?? "")")
            let shown = try await codes.heraldctl(["verify", "show-email", job.verificationID])
            #expect(shown.contains("state: sent"))
            #expect(shown.contains("purpose: mfa_sign_in"))
            #expect(shown.contains("attempts=1") && shown.contains("status=pending"), "\(shown)")
            #expect(shown.contains("call: ") && shown.contains("provider=smtp"))
            #expect(!shown.contains(code) && !shown.contains(job.email), "neither the code nor the address in clear")

            let verified = try await codes.heraldctl(["verify", "email-code", job.email, code, "--purpose", "mfa_sign_in"])
            #expect(verified.hasPrefix("verified"))
            #expect(try await codes.heraldctl(["verify", "show-email", job.verificationID]).contains("status=verified"))
            try await worker.stop()
        }
    }

    /// Bodies any AMQP client could publish: each malformed one is dead-lettered at once with a
    /// reason naming the field, and nothing is mailed or recorded.
    @Test func malformedCodeJobsAreDeadLetteredNamingTheField() async throws {
        try await withHarness { harness in
            let codes = try await Codes(harness)
            let worker = try await codes.email.start()
            let address = codes.email.address(1)
            let bodies: [(String, String)] = [
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m0","purpose":"sign_in"}"#, "email"),
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m1","email":"not-an-address","purpose":"sign_in"}"#, "email"),
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m2","email":"\#(address)","purpose":"sign_in","code_length":3}"#, "code_length"),
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m3","email":"\#(address)","purpose":"sign_in","code_ttl_seconds":5}"#, "code_ttl_seconds"),
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m4","email":"\#(address)","purpose":"reset_password"}"#, "purpose"),
                (#"{"version":1,"verification_id":"","email":"\#(address)","purpose":"sign_in"}"#, "verification_id"),
                (#"{"version":1,"verification_id":"\#(harness.namespace)-m6","email":"\#(address)","purpose":"sign_in","client":{"ip":"999.1.1.1"}}"#, "client.ip"),
            ]
            var expected: [String: String] = [:]
            for (n, (body, field)) in bodies.enumerated() {
                let id = "\(harness.namespace)-bad\(n)"
                let envelope = JobEnvelope(messageID: id, typeName: EmailCodeJob.typeName, correlationID: nil, timestamp: Date())
                try await harness.client.publishRaw(body: Array(body.utf8), routingKey: EmailCodeJob.name, properties: envelope.properties())
                expected[id] = field
            }
            var letters: [String: String] = [:]
            try await eventually(timeout: .seconds(30), "all dead-lettered") {
                for letter in try await harness.drainDeadLetters(.email) {
                    if let reason = letter.properties.deadLetterStamp?.reason { letters[letter.properties.messageID ?? ""] = reason }
                }
                return letters.count == expected.count
            }
            for (id, field) in expected {
                let reason = try #require(letters[id])
                #expect(reason.contains(field), "\(id): \(reason)")
            }
            #expect(codes.email.received(to: address).isEmpty)
            let rows = try await harness.database.query("SELECT count(*)::int FROM herald.email_otp_verifications WHERE email = \(address)", logger: harness.logger)
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
            try await worker.stop()
        }
    }
}

extension EmailCodeJob {
    /// The same request under another verification id.
    func withID(_ id: String) -> EmailCodeJob {
        var job = self
        job.verificationID = id
        return job
    }
}
