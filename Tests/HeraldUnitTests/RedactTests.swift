@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

@Suite struct RedactTests {
    @Test func phonesAndEmailsAreMasked() {
        #expect(Redact.phone("+4915112345678") == "+49*********78")
        #expect(Redact.email("alice@example.com") == "a***@example.com")
    }

    @Test func scrubCatchesWhatCallersForgot() {
        let text = Redact.scrub("sent to +4915112345678 and bob.smith@example.org, id +12")
        #expect(!text.contains("15112345678"))
        #expect(!text.contains("bob.smith"))
        #expect(text.contains("@example.org"))
        #expect(text.contains("id +12"))
    }
}

@Suite struct TopologyTests {
    @Test func namesFollowTheNamespace() {
        let topology = HeraldTopology(namespace: "h", retryDelaysMilliseconds: [100, 200])
        #expect(topology.workQueue(.sms) == "h.sms")
        #expect(topology.retryQueue(.sms, tier: 0) == "h.sms.retry.1")
        #expect(topology.deadLetterQueue(.email) == "h.email.dead")
        #expect(topology.retryTier(afterAttempt: 1) == 0)
        #expect(topology.retryTier(afterAttempt: 9) == 1)
        let all = topology.all
        #expect(all.exchanges.map(\.name).sorted() == ["h", "h.dlx", "h.events"])
        // work + dead + 2 retry tiers per kind
        #expect(all.queues.count == JobKind.allCases.count * 4)
        let sms = all.queues.first { $0.name == "h.sms" }!
        #expect(sms.arguments["x-queue-type"] == .string("quorum"))
        #expect(sms.arguments["x-dead-letter-exchange"] == .string("h.dlx"))
        let tier = all.queues.first { $0.name == "h.sms.retry.2" }!
        #expect(tier.arguments["x-message-ttl"] == .int(200))
        #expect(tier.arguments["x-dead-letter-routing-key"] == .string("h.sms"))
    }
}
