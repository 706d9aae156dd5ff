import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
import Logging
import Testing

/// The SMTP client against the real test server: STARTTLS and implicit TLS with AUTH,
/// connection reuse, 421/451 retried, 550 final.
@Suite(.needsServers) struct EmailSMTPTests {
    static func message(to: String, subject: String = "Test") -> EmailMessage {
        EmailMessage(from: "Herald Tests <no-reply@herald.test>", replyTo: nil, to: to, subject: subject,
                     text: Secret("text body\n.leading dot line\n"), html: Secret("<p>html</p>"), requestID: "r", jobMessageID: UUID().uuidString, kind: "test")
    }

    static let logger = TestEnvironment.logger("test.smtp")

    @Test func starttlsAndImplicitTLSWithAuthReuseOneConnection() async throws {
        let namespace = TestEnvironment.namespace()
        for tls in [EmailConfiguration.SMTP.TLSMode.starttls, .implicit] {
            var configuration = EmailFixture.emailConfiguration(tls: tls).smtp
            configuration.poolSize = 1
            let client = try SMTPClient(configuration: configuration)
            var addresses: [String] = []
            for n in 0..<10 {
                let to = "reuse-\(namespace)-\(tls.rawValue)-\(n)@example.net"
                addresses.append(to)
                #expect(await client.send(Self.message(to: to), logger: Self.logger) == .accepted(reply: "2.0.0 Message accepted for delivery"))
            }
            #expect(await client.connectionsOpened == 1, "\(tls): one connection for ten messages")
            for to in addresses {
                let received = try #require(EmailFixture.rawMessages(to: to).first, "\(to) delivered")
                #expect(received.contains("X-Herald-TLS: yes\r\n"))
                #expect(received.contains("X-Herald-Auth: yes\r\n"))
                // Dot-stuffing undone by the server: the text part decodes to what was sent.
                let parsed = try #require(MaildirMessage.parse(received))
                #expect(parsed.text == "text body\n.leading dot line\n")
            }
            await client.shutdown()
        }
    }

    @Test func concurrentSendsShareThePool() async throws {
        let namespace = TestEnvironment.namespace()
        var configuration = EmailFixture.emailConfiguration().smtp
        configuration.poolSize = 3
        let client = try SMTPClient(configuration: configuration)
        let results = await withTaskGroup(of: SMTPClient.Result.self) { group in
            for n in 0..<30 {
                group.addTask { await client.send(Self.message(to: "pool-\(namespace)-\(n)@example.net"), logger: Self.logger) }
            }
            var out: [SMTPClient.Result] = []
            for await result in group { out.append(result) }
            return out
        }
        #expect(results.allSatisfy { if case .accepted = $0 { true } else { false } })
        #expect(await client.connectionsOpened <= 3)
        await client.shutdown()
    }

    @Test func wrongPasswordsAndMissingSTARTTLSAreTransient() async throws {
        var configuration = EmailFixture.emailConfiguration().smtp
        configuration.password = "wrong"
        let client = try SMTPClient(configuration: configuration)
        let result = await client.send(Self.message(to: "nobody@example.net"), logger: Self.logger)
        guard case .transient(let code) = result else {
            Issue.record("expected transient, got \(result)")
            return
        }
        #expect(code.hasPrefix("smtp-535"))

        // The server's certificate is not trusted without the CA: TLS fails, nothing is sent in clear.
        var untrusted = EmailFixture.emailConfiguration().smtp
        untrusted.caFile = ""
        let strict = try SMTPClient(configuration: untrusted)
        guard case .transient = await strict.send(Self.message(to: "nobody@example.net"), logger: Self.logger) else {
            Issue.record("an untrusted certificate was accepted")
            return
        }
    }

    /// A man in the middle answers STARTTLS with `220` and, in the same write, a reply meant
    /// to be read as an answer inside TLS: the client refuses and never starts TLS. The honest
    /// server (nothing after the 220) gets a ClientHello from the same client, so the stub tells
    /// an upgrade from a refusal.
    @Test(arguments: [
        ("250 2.0.0 injected\r\n", true), // a whole reply
        ("250-injected\r\n", true), // the first line of a multi-line one
        ("235 2.7.0", true), // a partial line
        ("", false), // nothing: an honest server
    ])
    func repliesInjectedAfterSTARTTLSAreRefused(injected: String, refused: Bool) async throws {
        let server = try await STARTTLSStubServer(injected: injected)
        defer { Task { await server.close() } }
        var configuration = EmailConfiguration.SMTP()
        configuration.host = "127.0.0.1"
        configuration.port = server.port
        configuration.tls = .starttls
        configuration.caFile = EmailFixture.smtpCA
        configuration.commandTimeoutMilliseconds = 5_000
        let client = try SMTPClient(configuration: configuration)
        let result = await client.send(Self.message(to: "nobody@example.net"), logger: Self.logger)
        await client.shutdown()
        try await eventually("the stub answered STARTTLS") { server.bytesAfterSTARTTLS.count == 1 }
        let after = try #require(server.bytesAfterSTARTTLS.first)
        if refused {
            #expect(result == .transient(code: "smtp-starttls-injection"))
            #expect(after.first != 0x16, "no TLS ClientHello after injected replies")
        } else {
            #expect(after.first == 0x16, "an honest 220 is followed by a TLS ClientHello")
            #expect(result != .transient(code: "smtp-starttls-injection"))
        }
    }

    @Test func answersAreClassified() async throws {
        let namespace = TestEnvironment.namespace()
        let client = try SMTPClient(configuration: EmailFixture.emailConfiguration().smtp)
        #expect(await client.send(Self.message(to: "reject550-\(namespace)@example.net"), logger: Self.logger) == .rejected(code: "smtp-550-5.1.1"))
        #expect(await client.send(Self.message(to: "fail451-\(namespace)@example.net"), logger: Self.logger) == .transient(code: "smtp-451-4.3.0"))
        #expect(await client.send(Self.message(to: "fail421-\(namespace)@example.net"), logger: Self.logger) == .transient(code: "smtp-421-4.3.2"))
        // After a refusal the connection is reset (or replaced after 421) and still delivers.
        if case .accepted = await client.send(Self.message(to: "after-\(namespace)@example.net"), logger: Self.logger) {} else {
            Issue.record("no delivery after refusals")
        }
        await client.shutdown()
    }

    /// Through the worker: 451 and 421 on the first try are retried and delivered once; 550
    /// is recorded as failed with `email.failed`, not retried.
    @Test func theWorkerRetriesTransientAndRecordsPermanentFailures() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let flaky451 = email.job(1, to: email.address(1, behaviour: "flaky451"))
            let flaky421 = email.job(2, to: email.address(2, behaviour: "flaky421"))
            let rejected = email.job(3, to: email.address(3, behaviour: "reject550"))
            let ids = [try await harness.enqueue(flaky451), try await harness.enqueue(flaky421), try await harness.enqueue(rejected)]
            try await eventually("all decided") {
                let statuses = try await harness.statuses(ids)
                return statuses[ids[0]] == "completed" && statuses[ids[1]] == "completed" && statuses[ids[2]] == "rejected"
            }
            #expect(try await harness.ledger(ids[0])?.1 == 2, "451 retried once")
            #expect(try await harness.ledger(ids[1])?.1 == 2, "421 retried once")
            #expect(try await harness.ledger(ids[2])?.1 == 1, "550 not retried")
            #expect(email.received(to: flaky451.email).count == 1)
            #expect(email.received(to: flaky421.email).count == 1)
            #expect(email.received(to: rejected.email).isEmpty)
            // Each retry minted a fresh code; only the delivered one is live.
            #expect(try await email.codes(flaky451.requestID) == ["superseded", "pending"])
            let code = try #require(email.received(to: flaky451.email).first?.query("oobCode"))
            if case .success = try await email.consume(flaky451.email, code) {} else { Issue.record("the delivered code does not work") }

            let failed = try #require(try await email.request(rejected.requestID))
            #expect(failed.0 == "failed")
            #expect(failed.1 == "provider_rejected:smtp:smtp-550-5.1.1")
            #expect(try await email.codes(rejected.requestID) == ["failed"])
            let events = try await email.events.take(atLeast: 3)
            #expect(events.filter { $0.0 == "email.sent" }.count == 2)
            let failure = try #require(events.first { $0.0 == "email.failed" })
            #expect(failure.1["request_id"] as? String == rejected.requestID)
            #expect((failure.1["reason"] as? String)?.contains("smtp-550") == true)
            try await worker.stop()
        }
    }

    @Test func aServerThatKeepsFailingDeadLettersAfterTheLastTry() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            let job = email.job(1, to: email.address(1, behaviour: "fail451"))
            let id = try await harness.enqueue(job)
            try await eventually("dead") { try await harness.ledger(id)?.0 == "dead" }
            let letters = try await harness.drainDeadLetters(.email)
            guard let reason = letters.first?.properties.deadLetterStamp?.reason else {
                Issue.record("no dead letter with a reason")
                return
            }
            #expect(reason.contains("smtp-451"))
            #expect(email.received(to: job.email).isEmpty)
            try await worker.stop()
        }
    }

    @Test func anUnreachableServerFailsOverToTheNextProvider() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start {
                $0.email.providers = [.smtp, .outbox]
                $0.email.smtp.port = 1
            }
            let job = email.job(1)
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }
            #expect(try await email.request(job.requestID)?.2 == "outbox")
            let spool = (try? String(contentsOfFile: email.spool + "/email.jsonl", encoding: .utf8)) ?? ""
            #expect(spool.contains("oobCode="), "the dev spool holds the whole link")
            let outbox = try await harness.database.query("SELECT body::text FROM herald.dev_outbox WHERE message_id = \(id)", logger: harness.logger)
            for try await body in outbox.decode(String.self) {
                #expect(body.contains("oobCode=********"), "the outbox table holds it masked")
            }
            // Both calls are recorded, and `heraldctl verify show-email` prints them as they were.
            let calls = try await AttemptLog.email.read(job.requestID, client: harness.database, logger: harness.logger)
            #expect(calls.map(\.provider) == ["smtp", "outbox"])
            #expect(calls.map(\.result) == [.transient, .accepted])
            let shown = try JSONSerialization.jsonObject(with: Data(try await runHeraldctl(
                ["verify", "show-email", job.requestID, "--output", "json"], namespace: harness.namespace).utf8)) as? [String: Any]
            let printed = try #require(shown?["provider_calls"] as? [[String: Any]])
            #expect(printed.map { $0["provider"] as? String } == ["smtp", "outbox"])
            #expect(printed.map { $0["result"] as? String } == ["transient", "accepted"])
            #expect(shown?["state"] as? String == "sent")
            try await worker.stop()
        }
    }
}
