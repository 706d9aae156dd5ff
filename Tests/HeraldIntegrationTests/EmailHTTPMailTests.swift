import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
import Testing

/// The HTTP mail API provider against a local server (`HeraldStubs`), and SMTP command
/// timeouts against the real SMTP server.
@Suite(.needsServers) struct EmailHTTPMailTests {
    @Test func theHTTPMailProviderPostsJSONWithTheBearerToken() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let api = try await StubHTTPServer { request in
                let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: String] ?? [:]
                if object["to"]?.hasPrefix("bad-") == true { return .init(status: 422, body: #"{"error":"invalid recipient"}"#) }
                if object["to"]?.hasPrefix("busy-") == true { return .init(status: 503, body: "{}") }
                return .init(status: 202, body: #"{"id":"msg-123"}"#)
            }
            let worker = try await email.start {
                $0.email.providers = [.httpMail, .outbox]
                $0.email.httpMail.url = api.baseURL + "/v1/send"
                $0.email.httpMail.token = "tok-secret"
            }
            let good = email.job(1)
            let bad = email.job(2, to: email.address(2, behaviour: "bad"))
            let busy = email.job(3, to: email.address(3, behaviour: "busy"))
            let ids = [try await harness.enqueue(good), try await harness.enqueue(bad), try await harness.enqueue(busy)]
            try await eventually("decided") {
                let statuses = try await harness.statuses(ids)
                return statuses[ids[0]] == "completed" && statuses[ids[1]] == "rejected" && statuses[ids[2]] == "completed"
            }
            let request = try #require(api.requests.first { $0.bodyText.contains(good.email) })
            #expect(request.method == "POST")
            #expect(request.path == "/v1/send")
            #expect(request.header("Authorization") == "Bearer tok-secret")
            #expect(request.header("Idempotency-Key") == ids[0])
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: String])
            #expect(body["from"] == "Herald Tests <no-reply@herald.test>")
            #expect(body["subject"] == "Sign in to Herald")
            #expect(body["text"]?.contains("oobCode=") == true)
            #expect(body["html"]?.contains("oobCode=") == true)
            #expect(try await email.request(good.requestID)?.2 == "http_mail")
            #expect(try await email.request(bad.requestID)?.1 == "provider_rejected:http_mail:http-422")
            #expect(try await email.request(busy.requestID)?.2 == "outbox", "a 503 fails over to the next provider")
            try await worker.stop()
        }
    }

    @Test func aServerThatDoesNotAnswerTimesOut() async throws {
        var configuration = EmailFixture.emailConfiguration().smtp
        configuration.commandTimeoutMilliseconds = 1000
        let client = try SMTPClient(configuration: configuration)
        // The server answers DATA after 3 s: `.timeout` (not the delivery that answer would
        // be) shows the client gave up on its own 1 s limit. No wall-clock bound: under the
        // whole suite on two cores the timer fires late.
        let result = await client.send(EmailSMTPTests.message(to: "slow-\(TestEnvironment.namespace())@example.net"), logger: EmailSMTPTests.logger)
        #expect(result == .timeout)
        // The pool replaces the timed-out connection.
        if case .accepted = await client.send(EmailSMTPTests.message(to: "fast-\(TestEnvironment.namespace())@example.net"), logger: EmailSMTPTests.logger) {} else {
            Issue.record("no delivery after a timeout")
        }
        await client.shutdown()
    }
}
