import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// Every malicious continue URL of the unit suite, and bad link domains, sent as jobs to a
/// running worker: each is dead-lettered with a reason that says why, and nothing is sent.
@Suite(.needsServers) struct EmailRefusalTests {
    @Test func maliciousContinueURLsAreDeadLetteredAndNothingIsSent() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start { $0.email.authorizedDomains = ["app.example.com", "*.example.org", "localhost"] }
            var expected: [String: String] = [:]
            var requests: [String] = []
            let cases = malicious + [("https://app.example.com/", "link_domain")]
            for (n, (url, word)) in cases.enumerated() {
                let job = email.job(n, url: url, linkDomain: word == "link_domain" ? "evil.example.com" : nil)
                requests.append(job.requestID)
                // Published without the client's validation, as any AMQP client could.
                let body = try JSONEncoder().encode(job)
                let id = "\(harness.namespace)-m\(n)"
                let envelope = JobEnvelope(messageID: id, typeName: EmailActionJob.typeName, correlationID: nil, timestamp: Date())
                try await harness.client.publishRaw(body: Array(body), routingKey: EmailActionJob.name, properties: envelope.properties())
                expected[id] = word
            }
            #expect(expected.count >= 50)
            var letters: [String: String] = [:]
            try await eventually(timeout: .seconds(60), "all dead-lettered") {
                for letter in try await harness.drainDeadLetters(.email) {
                    if let reason = letter.properties.deadLetterStamp?.reason { letters[letter.properties.messageID ?? ""] = reason }
                }
                return letters.count == expected.count
            }
            for (id, word) in expected {
                let reason = try #require(letters[id], "\(id) dead-lettered")
                #expect(reason.lowercased().contains(word.lowercased()) || reason.contains("action_code_settings.url"), "\(id): \(reason)")
            }
            // Nothing sent, nothing recorded, no code minted.
            for n in 0..<cases.count { #expect(email.received(to: email.address(n)).isEmpty) }
            let rows = try await harness.database.query("SELECT count(*)::bigint FROM herald.email_requests WHERE request_id = ANY(\(requests)::text[])", logger: harness.logger)
            for try await count in rows.decode(Int.self) { #expect(count == 0) }
            #expect(try await email.events.take().isEmpty)
            try await worker.stop()
        }
    }

    /// The unit suite's list (Tests/HeraldCoreTests/EmailURLSafetyTests.swift), repeated here
    /// because test targets do not share sources.
    let malicious: [(String, String)] = [
        ("javascript:alert(1)", "scheme"), ("JavaScript:alert(document.cookie)", "scheme"),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "scheme"), ("vbscript:msgbox(1)", "scheme"),
        ("file:///etc/passwd", "scheme"), ("ftp://app.example.com/x", "scheme"), ("//evil.com/path", "scheme"),
        ("http://app.example.com/", "scheme"), ("https:app.example.com", "scheme"),
        ("https://evil.com/", "authorized"), ("https://app.example.com.evil.com/", "authorized"),
        ("https://evilapp.example.com/", "authorized"), ("https://app-example.com/", "authorized"),
        ("https://app.example.co/", "authorized"), ("https://app.examp1e.com/", "authorized"), ("https://example.org/", "authorized"),
        ("https://xn--pp-zxa.example.com/", "authorized"), ("https://app.example.com./x", "host"),
        ("https://127.0.0.1/", "authorized"), ("https://2130706433/", "authorized"), ("https://0x7f.0.0.1/", "authorized"),
        ("https://аpp.example.com/", "ASCII"), ("https://app.example。com/", "ASCII"), ("https://app.example.com\u{200B}.evil.com/", "ASCII"),
        ("https://app.example.com@evil.com/", "user info"), ("https://app.example.com:443@evil.com/", "user info"),
        ("https://user:pass@app.example.com/", "user info"), ("https://evil.com@app.example.com/", "user info"),
        ("https://evil.com\\@app.example.com/", "backslash"), ("https://app.example.com\\.evil.com/", "backslash"),
        ("https://evil.com\\app.example.com", "backslash"),
        ("https://%61pp.example.com/", "percent"), ("https://app.example.com%2eevil.com/", "percent"),
        ("https://app%2Eexample%2Ecom/", "percent"), ("https://app.example.com%40evil.com/", "percent"),
        ("https://app.example.com/\r\nLocation: https://evil.com", "ASCII"), ("https://app.example.com/\tx", "ASCII"),
        ("https://evil.com /app.example.com", "ASCII"),
        ("https://app.example.com/\"><script>alert(1)</script>", "character"), ("https://app.example.com/'onmouseover='alert(1)", "character"),
        ("https://app.example.com/<img>", "character"), ("https://app.example.com/{{link}}", "character"),
        ("https://app.example.com:99999/", "port"), ("https://app.example.com:0/", "port"), ("https:///app.example.com", "no host"),
        ("https://app.example.com/%zz", "percent"), ("https://app..example.com/", "host"), ("https://*.example.org/", "host"),
        ("https://app.example.com/" + String(repeating: "a", count: 2100), "2048"),
        ("http://localhost.evil.com/", "scheme"), ("http://evil.com/?localhost", "scheme"),
    ]
}
