import AMQP
import Foundation
@testable import HeraldEmail
@testable import HeraldRuntime
@testable import HeraldWire
import PostgresNIO
import Testing

/// `email.limits.*` against the real broker, database and SMTP server: each limit refuses
/// past its maximum, and only then, whatever the mode and whether or not an account exists.
@Suite(.needsServers) struct EmailLimitTests {
    private func decide(_ job: EmailActionJob, _ harness: Harness) async throws -> String {
        let id = try await harness.enqueue(job)
        try await eventually("decided \(job.requestID)") { ["completed", "rejected"].contains(try await harness.ledger(id)?.0 ?? "") }
        return try await harness.ledger(id)?.0 ?? ""
    }

    @Test(arguments: ["email_address", "email_domain", "ip", "global"])
    func eachLimitRefusesPastItsMaximumAndOnlyThen(scope: String) async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let window = 6011
            if scope == "global" {
                // A window length of its own (global rows are keyed by it), emptied first.
                try await harness.database.query("DELETE FROM herald.email_rate_counters WHERE scope = 'global' AND key LIKE \("shard-\(window)-%")",
                                                 logger: harness.logger)
            }
            let worker = try await email.start {
                switch scope {
                case "email_address": $0.email.limits.address = RateLimit(max: 2, windowSeconds: 3600)
                case "ip": $0.email.limits.ip = RateLimit(max: 2, windowSeconds: 3600)
                case "email_domain": $0.email.limits.domain = RateLimit(max: 2, windowSeconds: 3600)
                default: $0.email.limits.global = RateLimit(max: 2, windowSeconds: window)
                }
            }
            // One address for the address limit; other addresses from one /64 for the IP limit;
            // addresses of a domain of this test's own (from other networks) for the domain limit.
            let domain = "\(harness.namespace).example.net"
            func job(_ n: Int, network: Int = 0) -> EmailActionJob {
                let to = scope == "email_address" ? email.address(0) : scope == "email_domain" ? email.address(n, domain: domain) : nil
                var job = email.job(n, to: to)
                job.client = .init(ip: scope == "email_domain" ? harness.clientIP(network: n + 2) : harness.clientIP(network: network, host: n + 1))
                return job
            }
            #expect(try await decide(job(1), harness) == "completed")
            #expect(try await decide(job(2), harness) == "completed")
            #expect(try await decide(job(3), harness) == "rejected")
            let refused = try #require(try await email.request(job(3).requestID))
            #expect(refused.0 == "failed")
            #expect(refused.1 == "rate_limited:\(scope)")
            let events = try await email.events.take(atLeast: 3)
            #expect(events.contains { $0.0 == "email.failed" && $0.1["request_id"] as? String == job(3).requestID
                                      && $0.1["reason"] as? String == "rate_limited:\(scope)" })
            let sent = scope == "email_address" ? email.received(to: email.address(0)).count
                : (1...3).map { email.received(to: scope == "email_domain" ? email.address($0, domain: domain) : email.address($0)).count }.reduce(0, +)
            #expect(sent == 2)
            // Another address (address limit), another /64 (IP limit) or another domain (domain
            // limit) is not held back by it.
            if scope != "global" {
                var other = email.job(4, to: email.address(9, domain: scope == "email_domain" ? "other.\(domain)" : "example.net"))
                other.client = .init(ip: harness.clientIP(network: 1))
                #expect(try await decide(other, harness) == "completed")
            }
            // A redelivered refused request stays refused and sends nothing.
            #expect(try await decide(job(3), harness) == "rejected")
            try await worker.stop()
        }
    }

    @Test func theLimitCountsAndRefusesTheSameWithOrWithoutAnAccount() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start { $0.email.limits.address = RateLimit(max: 1, windowSeconds: 3600) }
            let member = email.address(1)
            let stranger = email.address(2)
            try await email.createAccount(for: member)
            // reset_password: the member gets a link, the stranger nothing (enumeration protection);
            // both requests count, and the second of each is refused alike.
            #expect(try await decide(email.job(1, mode: .resetPassword, to: member), harness) == "completed")
            #expect(try await decide(email.job(2, mode: .resetPassword, to: stranger), harness) == "completed")
            #expect(try await decide(email.job(3, mode: .resetPassword, to: member), harness) == "rejected")
            #expect(try await decide(email.job(4, mode: .resetPassword, to: stranger), harness) == "rejected")
            let a = try #require(try await email.request("\(harness.namespace)-r3"))
            let b = try #require(try await email.request("\(harness.namespace)-r4"))
            #expect(a.0 == b.0 && a.1 == b.1 && a.1 == "rate_limited:email_address")
            #expect(email.received(to: member).count == 1)
            #expect(email.received(to: stranger).isEmpty)
            try await worker.stop()
        }
    }

    @Test func anInvalidClientIPMakesTheJobInvalid() async throws {
        try await withHarness() { harness in
            let email = try await EmailFixture(harness)
            let worker = try await email.start()
            // The client library refuses it too; a producer that does not check sends it raw.
            var job = email.job(1)
            job.client = .init(ip: "2001:db8::/64")
            #expect(throws: (any Error).self) { try job.validate() }
            let body = try JSONEncoder().encode(job)
            try await harness.client.publishRaw(body: Array(body), routingKey: "email.action",
                                                properties: JobEnvelope(messageID: "\(harness.namespace)-bad", typeName: EmailActionJob.typeName).properties())
            var letters: [String] = []
            try await eventually("dead-lettered") {
                for letter in try await harness.drainDeadLetters(.email) {
                    if let reason = letter.properties.deadLetterStamp?.reason { letters.append(reason) }
                }
                return !letters.isEmpty
            }
            #expect(letters.first?.contains("client.ip must be an IPv4 or IPv6 address literal") == true, "\(letters)")
            #expect(email.received(to: job.email).isEmpty)
            try await worker.stop()
        }
    }
}
