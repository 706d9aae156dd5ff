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

/// A real `herald-push` process at the most verbose log level, pushing through APNs and FCM
/// (local servers) with its key and service account given as files: none of the push secrets,
/// provider JWTs, access tokens or keys appears in its log, and no secret in the database.
@Suite(.needsServers) struct PushSecrecyTests {
    @Test func noSecretJWTOrKeyInTheLogsOrTheDatabase() async throws {
        try await withHarness() { harness in
            let push = try await PushFixture(harness)
            let keyFile = push.spool + "-AuthKey.p8"
            let accountFile = push.spool + "-service-account.json"
            _ = FileManager.default.createFile(atPath: keyFile, contents: Data(push.apnsKey.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
            _ = FileManager.default.createFile(atPath: accountFile, contents: Data(push.serviceAccountJSON.utf8), attributes: [.posixPermissions: 0o600])
            defer {
                try? FileManager.default.removeItem(atPath: keyFile)
                try? FileManager.default.removeItem(atPath: accountFile)
            }
            let worker = try WorkerProcess("herald-push", namespace: harness.namespace, environment: [
                "HERALD_LOG_LEVEL": "trace",
                "HERALD_PUSH_DELIVERY": "live",
                "HERALD_PUSH_RATE_LIMIT_MAX": "0",
                "HERALD_PUSH_APNS_KEY_FILE": keyFile,
                "HERALD_PUSH_APNS_KEY_ID": push.keyID,
                "HERALD_PUSH_APNS_TEAM_ID": push.teamID,
                "HERALD_PUSH_APNS_PRODUCTION_HOST": push.production.baseURL,
                "HERALD_PUSH_APNS_SANDBOX_HOST": push.sandbox.localhostURL,
                "HERALD_PUSH_APNS_CA_FILE": push.tls.caFile,
                "HERALD_PUSH_FCM_SERVICE_ACCOUNT_FILE": accountFile,
                "HERALD_PUSH_FCM_SEND_ENDPOINT": push.fcm.baseURL,
            ])
            try await worker.waitUntilReady()
            var ids: [String] = []
            var jobs: [PushVerificationJob] = []
            for n in 0..<10 {
                let job = push.job(n, platform: n % 2 == 0 ? .apns : .fcm, environment: n % 4 == 0 ? .sandbox : .production)
                jobs.append(job)
                ids.append(try await harness.enqueue(job))
            }
            try await eventually("all delivered") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 10 }
            var secrets: [String] = []
            for job in jobs { secrets += (push.apnsSecrets(job.deviceToken) + push.fcmSecrets(job.deviceToken)).map(\.1) }
            #expect(secrets.count == 10)
            let jwts = Set((push.production.requests + push.sandbox.requests).map(\.jwt))
            let accessTokens = Set(push.fcm.messages.map(\.accessToken))
            #expect(!jwts.isEmpty && !accessTokens.isEmpty)
            _ = try await push.confirm(jobs[1].receipt, "wrong-secret")

            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
            let log = worker.log
            #expect(log.count > 10_000, "a trace-level log was written")
            let dump = try await ChildProcess.run(SMSSecrecyTests.pgDump, ["--data-only", "--schema=herald", "--dbname=\(TestEnvironment.databaseURL)"], timeout: .seconds(60))
            #expect(dump.contains(jobs[0].receipt), "the dump holds this test's rows")
            for secret in secrets {
                #expect(!log.contains(secret), "a push secret is in the worker's log")
                #expect(!dump.contains(secret), "a push secret is in the database")
            }
            for jwt in jwts {
                #expect(!log.contains(jwt), "a provider JWT is in the log")
                #expect(!log.contains(String(jwt.split(separator: ".").last!)), "a JWT signature is in the log")
            }
            for token in accessTokens { #expect(!log.contains(token), "an OAuth2 access token is in the log") }
            let keyLines = push.apnsKey.pemRepresentation.split(separator: "\n").filter { !$0.hasPrefix("-----") }
            for line in keyLines { #expect(!log.contains(line), "the APNs key is in the log") }
            for job in jobs { #expect(!dump.contains(job.deviceToken), "a whole device token is in the database") }
        }
    }
}
