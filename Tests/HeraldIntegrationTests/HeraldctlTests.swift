import AMQP
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The operator's commands against a test namespace on the real broker and database: the
/// built `heraldctl` binary, its JSON output read as a script would read it.
@Suite(.needsServers) struct HeraldctlTests {
    /// Dead letters of three kinds of trouble: two bodies that do not validate (`invalid`) and
    /// one job whose handler keeps failing (`exhausted`).
    private func deadLetters(_ harness: Harness) async throws -> (invalid: [String], exhausted: String) {
        let worker = try await harness.startRunner(.sms, CountingHandler(failing: true))
        var properties = JobEnvelope(messageID: "bad-schema", typeName: SMSVerificationJob.typeName).properties()
        try await harness.client.publishRaw(body: Array(#"{"version":1,"verification_id":7,"phone_number":"+4915112345678","purpose":"sign_in"}"#.utf8),
                                            routingKey: "sms.verification", properties: properties)
        properties.messageID = "bad-bytes"
        try await harness.client.publishRaw(body: [0x7B, 0xC3, 0x28, 0x00, 0xFF], routingKey: "sms.verification", properties: properties)
        let exhausted = try await harness.enqueue(harness.sms(1))
        try await eventually("three dead letters") { try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 3 }
        try await worker.stop()
        return (["bad-schema", "bad-bytes"], exhausted)
    }

    private func json(_ arguments: [String], _ harness: Harness) async throws -> [String: Any] {
        let output = try await runHeraldctl(arguments + ["--output", "json"], namespace: harness.namespace)
        let object = try JSONSerialization.jsonObject(with: Data(output.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(output)")
    }

    private func ids(_ listing: [String: Any]) -> Set<String> {
        Set(((listing["letters"] as? [[String: Any]]) ?? []).compactMap { $0["message_id"] as? String })
    }

    @Test func deadLettersAreListedByFilterShownMaskedAndPurgedSelectively() async throws {
        try await withHarness(retryDelays: [50], maxAttempts: 1) { harness in
            let (invalid, exhausted) = try await deadLetters(harness)
            let all = ["dlq", "list", "--kind", "sms"]

            #expect(ids(try await json(all, harness)) == Set(invalid + [exhausted]))
            #expect(ids(try await json(all + ["--category", "invalid"], harness)) == Set(invalid))
            #expect(ids(try await json(all + ["--category", "exhausted"], harness)) == [exhausted])
            #expect(ids(try await json(all + ["--reason", "UTF-8"], harness)) == ["bad-bytes"])
            #expect(ids(try await json(all + ["--type", "sms.verification"], harness)).count == 3)
            #expect(ids(try await json(all + ["--type", "email.action"], harness)).isEmpty)
            #expect(ids(try await json(all + ["--newer-than", "10m"], harness)).count == 3)
            #expect(ids(try await json(all + ["--older-than", "1h"], harness)).isEmpty)
            #expect(ids(try await json(all + ["--limit", "1"], harness)).count == 1)
            // Listing takes nothing away, and keeps the order.
            #expect(try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 3)

            // show: the phone number masked unless --raw; a body that is not JSON escaped.
            let phone = harness.phone(1)
            let shown = try await json(["dlq", "show", "--kind", "sms", exhausted], harness)
            let body = try #require(shown["body"] as? [String: Any])
            let masked = try #require(body["phone_number"] as? String)
            #expect(masked != phone && masked.hasPrefix(String(phone.prefix(3))) && masked.contains("*"))
            #expect((shown["letter"] as? [String: Any])?["category"] as? String == "exhausted")
            let raw = try await json(["dlq", "show", "--kind", "sms", "--raw", exhausted], harness)
            #expect((raw["body"] as? [String: Any])?["phone_number"] as? String == phone)
            let bytes = try await json(["dlq", "show", "--kind", "sms", "bad-bytes"], harness)
            #expect(bytes["body_is_json"] as? Bool == false)
            #expect((bytes["body"] as? String)?.contains("\\xc3") == true)
            let missing = await #expect(throws: ChildProcessError.self) { _ = try await runHeraldctl(["dlq", "show", "--kind", "sms", "no-such-id"], namespace: harness.namespace) }
            #expect(missing?.description.contains("exited 1:") == true)

            // purge with a filter takes only the matching letters.
            let unconfirmed = await #expect(throws: ChildProcessError.self) { _ = try await runHeraldctl(["dlq", "purge", "--kind", "sms"], namespace: harness.namespace) }
            #expect(unconfirmed?.description.contains("exited 64:") == true, "purge without --yes is a usage error")
            let purged = try await json(["dlq", "purge", "--kind", "sms", "--category", "invalid", "--yes"], harness)
            #expect(purged["purged"] as? Int == 2)
            #expect(ids(try await json(all, harness)) == [exhausted])
        }
    }

    /// Bodies that are not JSON, or not UTF-8, still have their phone numbers and addresses
    /// masked; letters without a message id are named by position, never by a stand-in that
    /// could be someone's message id.
    @Test func unparsedBodiesAreMaskedAndLettersWithoutIDAreNamedByPosition() async throws {
        try await withHarness(retryDelays: [50], maxAttempts: 1) { harness in
            let worker = try await harness.startRunner(.sms, CountingHandler())
            let (phone, address) = (harness.phone(7), "alice.smith@example.com")
            var properties = JobEnvelope(messageID: "cut-json", typeName: SMSVerificationJob.typeName).properties()
            try await harness.client.publishRaw(body: Array(#"{"version":1,"verification_id":"v","phone_number":"\#(phone)","note":"\#(address)""#.utf8),
                                                routingKey: "sms.verification", properties: properties)
            properties.messageID = "not-utf8"
            try await harness.client.publishRaw(body: Array(#"{"phone_number":"\#(phone)","#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""to":"\#(address)"}"#.utf8),
                                                routingKey: "sms.verification", properties: properties)
            properties.messageID = nil
            for n in 1...2 {
                try await harness.client.publishRaw(body: Array(try JSONEncoder().encode(harness.sms(n))), routingKey: "sms.verification", properties: properties)
            }
            try await eventually("four dead letters") { try await harness.depth(harness.topology.deadLetterQueue(.sms)) == 4 }
            try await worker.stop()

            for id in ["cut-json", "not-utf8"] {
                let shown = try await json(["dlq", "show", "--kind", "sms", id], harness)
                #expect(shown["body_is_json"] as? Bool == false)
                let body = try #require(shown["body"] as? String)
                #expect(!body.contains(phone) && !body.contains(address), "\(id): shown in clear: \(body)")
                #expect(body.contains(Redact.phone(phone)) && body.contains(Redact.email(address)), "\(id): \(body)")
                let raw = try #require(try await json(["dlq", "show", "--kind", "sms", "--raw", id], harness)["body"] as? String)
                #expect(raw.contains(phone) && raw.contains(address), "--raw shows the body as received")
            }
            let text = try await runHeraldctl(["dlq", "show", "--kind", "sms", "not-utf8"], namespace: harness.namespace)
            #expect(text.contains("\\xff") && !text.contains(phone) && !text.contains(address))

            // Without a message id: JSON null and a position; the text names the option to use.
            let letters = try #require(try await json(["dlq", "list", "--kind", "sms"], harness)["letters"] as? [[String: Any]])
            #expect(letters.compactMap { $0["position"] as? Int } == [1, 2, 3, 4])
            let positions = letters.filter { $0["message_id"] is NSNull }.compactMap { $0["position"] as? Int }
            #expect(positions.count == 2)
            let listing = try await runHeraldctl(["dlq", "list", "--kind", "sms"], namespace: harness.namespace)
            for position in positions { #expect(listing.contains("(no message id: --position \(position))"), "\(listing)") }
            #expect(!listing.contains("\n-  "), "no letter listed as '-'")
            let missing = await #expect(throws: ChildProcessError.self) { _ = try await runHeraldctl(["dlq", "show", "--kind", "sms", "-"], namespace: harness.namespace) }
            #expect(missing?.description.contains("exited 1:") == true, "'-' is a message id like any other, and none has it")

            let first = try #require(positions.first)
            let byPosition = try await json(["dlq", "show", "--kind", "sms", "--position", String(first)], harness)
            #expect((byPosition["letter"] as? [String: Any])?["position"] as? Int == first)
            #expect((byPosition["letter"] as? [String: Any])?["message_id"] is NSNull)
            let sent = try #require((byPosition["body"] as? [String: Any])?["verification_id"] as? String)

            // The position is accepted back by replay and purge too: purge takes that letter alone.
            let purged = try await json(["dlq", "purge", "--kind", "sms", "--position", String(first), "--yes"], harness)
            #expect(purged["purged"] as? Int == 1)
            let left = try #require(try await json(["dlq", "list", "--kind", "sms"], harness)["letters"] as? [[String: Any]])
            #expect(left.count == 3)
            for letter in left where letter["message_id"] is NSNull {
                let shown = try await json(["dlq", "show", "--kind", "sms", "--position", String(try #require(letter["position"] as? Int))], harness)
                #expect((shown["body"] as? [String: Any])?["verification_id"] as? String != sent, "the purged letter is gone, the other one stays")
            }
        }
    }

    /// Credentials some jobs carry are masked in `dlq show`: an Apple authorization code, and
    /// the claims and signature of a notification's JWT (its header stays: alg and kid).
    @Test func appleCredentialsInDeadLettersAreMasked() async throws {
        try await withHarness { harness in
            let code = "c" + String(repeating: "0123456789abcdef", count: 4) + ".0.secret"
            let claims = Data(#"{"events":"{\"email\":\"x1y2z3@privaterelay.appleid.com\"}"}"#.utf8).base64EncodedString()
            let jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IksxIn0." + claims + ".c2lnbmF0dXJl"
            let letters: [(String, String, String)] = [
                ("apple-token", "apple.token.v1", #"{"version":1,"account_id":"a","client_id":"c","authorization_code":"\#(code)"}"#),
                ("apple-note", "apple.notification.v1", #"{"version":1,"payload":"\#(jwt)"}"#),
            ]
            for (id, type, body) in letters {
                var properties = JobEnvelope(messageID: id, typeName: type).properties()
                properties.headers[DeadLetterStamp.header] = DeadLetterStamp(reason: "test", category: "invalid", queue: harness.topology.workQueue(.apple), routingKey: "apple.token", attempts: 0, at: Date()).fieldValue
                try await harness.connection.publish(body: Array(body.utf8), exchange: harness.topology.deadLetterExchange, routingKey: JobKind.apple.rawValue, properties: properties)
            }
            try await eventually("two dead letters") { try await harness.depth(harness.topology.deadLetterQueue(.apple)) == 2 }
            let token = try #require(try await json(["dlq", "show", "--kind", "apple", "apple-token"], harness)["body"] as? [String: Any])
            #expect(token["authorization_code"] as? String == "***")
            #expect(token["account_id"] as? String == "a")
            let note = try #require(try await json(["dlq", "show", "--kind", "apple", "apple-note"], harness)["body"] as? [String: Any])
            #expect(note["payload"] as? String == "eyJhbGciOiJSUzI1NiIsImtpZCI6IksxIn0.***.***")
            let text = try await runHeraldctl(["dlq", "show", "--kind", "apple", "apple-note"], namespace: harness.namespace)
            #expect(!text.contains(claims) && !text.contains(code))
            let raw = try #require(try await json(["dlq", "show", "--kind", "apple", "--raw", "apple-token"], harness)["body"] as? [String: Any])
            #expect(raw["authorization_code"] as? String == code, "--raw shows the body as received")
        }
    }

    @Test func statsShowDepthsOldestAgesRatesAndOutcomes() async throws {
        try await withHarness(retryDelays: [50], maxAttempts: 1) { harness in
            let (_, exhausted) = try await deadLetters(harness)
            let worker = try await harness.startRunner(.sms, CountingHandler())
            let completed = try await harness.enqueue(harness.sms(2))
            try await eventually("completed") { try await harness.ledger(completed)?.0 == "completed" }
            try await worker.stop()
            // A job waiting with no consumer, published a few seconds ago (timestamps are whole seconds).
            var properties = JobEnvelope(messageID: "waiting", typeName: SMSVerificationJob.typeName).properties()
            properties.timestamp = Date().addingTimeInterval(-5)
            try await harness.client.publishRaw(body: Array(try JSONEncoder().encode(harness.sms(3))), routingKey: "sms.verification", properties: properties)
            try await eventually("waiting in the work queue") { try await harness.depth(harness.topology.workQueue(.sms)) == 1 }

            func queue(_ stats: [String: Any], _ name: String) throws -> [String: Any] {
                try #require((stats["queues"] as? [[String: Any]])?.first { $0["name"] as? String == name }, "no row for \(name)")
            }
            let stats = try await json(["stats"], harness)
            let dead = try queue(stats, harness.topology.deadLetterQueue(.sms))
            #expect(dead["messages"] as? Int == 3)
            #expect(dead["role"] as? String == "dead")
            #expect((dead["oldest_age_seconds"] as? Double ?? -1) >= 0)
            let work = try queue(stats, harness.topology.workQueue(.sms))
            #expect(work["messages"] as? Int == 1)
            #expect(work["consumers"] as? Int == 0)
            #expect(work["oldest_age_note"] as? String == "not peeked", "a quorum work queue is not peeked by default")
            #expect(try queue(stats, harness.topology.retryQueue(.sms, tier: 0))["role"] as? String == "retry")

            let peeked = try await json(["stats", "--peek-work-queues"], harness)
            let age = try queue(peeked, harness.topology.workQueue(.sms))["oldest_age_seconds"] as? Double
            #expect((age ?? 0) >= 4, "the waiting job was published 5 s ago: \(String(describing: age))")
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 1, "peeking puts the job back")

            // The ledger is shared by every test: look for this test's own jobs' types and statuses.
            let finished = try #require(stats["finished"] as? [[String: Any]])
            func count(_ status: String) -> Int { finished.first { $0["type"] as? String == SMSVerificationJob.typeName && $0["status"] as? String == status }?["count"] as? Int ?? 0 }
            #expect(count("completed") >= 1)
            #expect(count("dead") >= 1)
            let rates = try #require(stats["rates"] as? [[String: Any]])
            #expect((rates.first { $0["queue"] as? String == "sms" }?["finished_per_second_1m"] as? Double ?? 0) > 0)
            _ = exhausted
        }
    }
}
