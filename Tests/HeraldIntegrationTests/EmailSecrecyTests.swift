import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// A real `herald-email` process at the most verbose log level, delivering over SMTP
/// (STARTTLS, AUTH) with some messages failing over to the dev outbox: none of the link
/// codes it sent appears in its logs or in a dump of the database.
@Suite(.needsServers) struct EmailSecrecyTests {
    @Test func noLinkCodeInTheLogsOrTheDatabase() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let smtp = EmailFixture.emailConfiguration().smtp
            let worker = try WorkerProcess("herald-email", namespace: harness.namespace, environment: [
                "HERALD_LOG_LEVEL": "trace",
                "HERALD_OUTBOX_DIRECTORY": email.spool,
                "HERALD_EMAIL_TEMPLATES_DIR": EmailFixture.templatesDirectory,
                "HERALD_EMAIL_AUTHORIZED_DOMAINS": "app.example.com,*.example.org",
                "HERALD_EMAIL_LINK_DOMAINS": "auth.example.com",
                "HERALD_EMAIL_DEFAULT_LINK_DOMAIN": "auth.example.com",
                "HERALD_EMAIL_SENDER": "Herald <no-reply@herald.test>",
                "HERALD_EMAIL_PROVIDERS": "smtp,outbox",
                "HERALD_EMAIL_SMTP_HOST": smtp.host,
                "HERALD_EMAIL_SMTP_PORT": String(smtp.port),
                "HERALD_EMAIL_SMTP_CA_FILE": smtp.caFile,
                "HERALD_EMAIL_SMTP_USERNAME": "herald",
                "HERALD_EMAIL_SMTP_PASSWORD_FILE": EmailFixture.smtpPasswordFile,
                // Every suite writes to example.net within the hour (EmailFixture's limits).
                "HERALD_EMAIL_LIMITS_DOMAIN_MAX": "100000000", "HERALD_EMAIL_LIMITS_IP_MAX": "100000000",
            ])
            try await worker.waitUntilReady()
            var jobs: [EmailActionJob] = []
            var ids: [String] = []
            for n in 0..<10 {
                // Every third recipient is refused transiently by the server: those go to the outbox.
                let address = email.address(n, behaviour: n % 3 == 0 ? "fail451" : "secret")
                let job = email.job(n, mode: n % 2 == 0 ? .signIn : .verifyAndChangeEmail, to: address, locale: ["en", "de", "fr", "pt-BR"][n % 4])
                jobs.append(job)
                ids.append(try await harness.enqueue(job))
            }
            try await eventually("all sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 10 }

            // The codes, as the mailboxes received them (the SMTP server's maildir, the outbox spool).
            var codes = Set(jobs.flatMap { email.received(to: $0.email) }.compactMap { $0.query("oobCode") })
            let spool = (try? String(contentsOfFile: email.spool + "/email.jsonl", encoding: .utf8)) ?? ""
            for line in spool.split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], let text = object["text"],
                      let message = EmailFixture.Received(envelopeTo: "", headers: [], text: text, html: "", contentType: "").query("oobCode") else { continue }
                codes.insert(message)
            }
            #expect(codes.count == 10, "every message's code was found: \(codes.count)")
            // A consume of a wrong and a right code goes through the log-free API too.
            _ = try await email.consume(jobs[1].email, "x" + (codes.first ?? "") , mode: .verifyAndChangeEmail)

            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
            let log = worker.log
            #expect(log.count > 10_000, "a trace-level log was written")
            let dump = try await ChildProcess.run(SMSSecrecyTests.pgDump, ["--data-only", "--schema=herald", "--dbname=\(TestEnvironment.databaseURL)"], timeout: .seconds(60))
            #expect(dump.contains(jobs[0].requestID), "the dump holds this test's rows")
            for code in codes {
                #expect(!log.contains(code), "a link code is in the worker's log")
                #expect(!dump.contains(code), "a link code is in the database")
            }
            for job in jobs { #expect(!log.contains(job.email), "a whole address is in the log") }
            #expect(!log.contains(EmailFixture.smtpPassword), "the SMTP password is in the log")
        }
    }
}
