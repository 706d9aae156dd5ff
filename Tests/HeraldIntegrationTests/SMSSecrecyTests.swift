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

/// A real `herald-sms` process at the most verbose log level, sending through Twilio-,
/// Kannel providers (failing over from one to the other): none of the codes it sent
/// appears in its logs or in a dump of the database.
@Suite(.needsServers) struct SMSSecrecyTests {
    @Test func noCodeInTheLogsOrTheDatabase() async throws {
        try await withHarness() { harness in
            let spool = NSTemporaryDirectory() + "herald-secrecy-\(harness.namespace)"
            let twilio = try await StubHTTPServer { request in
                // Every other message fails over to the next provider.
                request.form["To"].map { Int($0.suffix(1))! % 2 == 0 } == true
                    ? .init(status: 503, body: "{}")
                    : .init(status: 201, body: #"{"sid":"SM1","status":"queued"}"#)
            }
            let env = ProcessInfo.processInfo.environment
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: [
                "HERALD_LOG_LEVEL": "trace",
                "HERALD_OUTBOX_DIRECTORY": spool,
                // Ten digits: a code cannot turn up by chance in a timestamp of the dump.
                "HERALD_SMS_CODE_LENGTH": "10",
                "HERALD_SMS_PROVIDERS": "twilio,kannel",
                "HERALD_SMS_TWILIO_BASE_URL": twilio.baseURL,
                "HERALD_SMS_TWILIO_ACCOUNT_SID": "AC1",
                "HERALD_SMS_TWILIO_AUTH_TOKEN": "token",
                "HERALD_SMS_TWILIO_FROM": "+15005550006",
                "HERALD_SMS_KANNEL_URL": env["HERALD_DEV_KANNEL_URL"] ?? "http://127.0.0.1:55682/cgi-bin/sendsms",
                "HERALD_SMS_KANNEL_USERNAME": "herald",
                "HERALD_SMS_KANNEL_PASSWORD": "herald-dev",
            ])
            try await worker.waitUntilReady()
            var ids: [String] = []
            var jobs: [SMSVerificationJob] = []
            for n in 0..<10 {
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-s\(n)", phoneNumber: harness.phone(n), locale: ["en", "de", "pt-BR", "ru"][n % 4])
                jobs.append(job)
                ids.append(try await harness.enqueue(job))
            }
            try await eventually("all sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 10 }

            // The codes, as the phones received them (Twilio's request bodies, Kannel's SMSC, the outbox spool).
            var codes = Set(twilio.requests.compactMap { $0.form["Body"].flatMap { SMSFixture.code(in: $0, length: 10) } })
            let smsc = (try? String(contentsOfFile: env["HERALD_DEV_KANNEL_SMSC_LOG"] ?? TestEnvironment.root.appendingPathComponent(".run/kannel/fakesmsc.out").path, encoding: .utf8)) ?? ""
            for line in smsc.split(separator: "\n") where jobs.contains(where: { line.contains($0.phoneNumber) }) {
                if let code = SMSFixture.code(in: String(line), length: 10) { codes.insert(code) }
            }
            #expect(codes.count >= 10, "every message's code was found: \(codes.count)")
            // A wrong and a right check go through the log-free check API too.
            let verification = try HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
            _ = try await verification.verifyPhone(verificationID: jobs[1].verificationID, code: "0000000000", logger: harness.logger)

            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
            let log = worker.log
            #expect(log.count > 10_000, "a trace-level log was written")
            let dump = try await ChildProcess.run(Self.pgDump, ["--data-only", "--schema=herald", "--dbname=\(TestEnvironment.databaseURL)"], timeout: .seconds(60))
            #expect(dump.contains(jobs[0].verificationID), "the dump holds this test's rows")
            for code in codes {
                #expect(!log.contains(code), "a code is in the worker's log")
                #expect(!dump.contains(code), "a code is in the database")
            }
            for job in jobs { #expect(!log.contains(job.phoneNumber), "a whole phone number is in the log") }
            await twilio.close()
            try? FileManager.default.removeItem(atPath: spool)
        }
    }

    static var pgDump: String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.sorted().last.map { "/usr/lib/postgresql/\($0)/bin/pg_dump" } ?? "/usr/bin/pg_dump"
    }
}
