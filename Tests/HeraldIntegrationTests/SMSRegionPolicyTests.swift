import Foundation
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The region, number-type and per-region cap policy of herald-sms (docs/abuse.md), numbers
/// read by libphonenumber, against the real broker and database.
@Suite(.needsServers) struct SMSRegionPolicyTests {
    /// One number of each kind, with what libphonenumber says of it and what the policy
    /// (deny JM; default types) decides: nil is sent, else the refusal's reason.
    static let numbers: [(number: String, region: String, type: PhoneNumberType, reason: String?)] = [
        ("+12015550123", "US", .fixedLineOrMobile, nil),
        ("+18092345678", "DO", .fixedLineOrMobile, nil),
        ("+447400123456", "GB", .mobile, nil),
        ("+18762101234", "JM", .mobile, "region_not_allowed:JM"),
        ("+449098790000", "GB", .premiumRate, "number_type_not_allowed:premium_rate"),
        ("+18002345678", "US", .tollFree, "number_type_not_allowed:toll_free"),
        ("+445612345678", "GB", .voip, "number_type_not_allowed:voip"),
    ]

    @Test func eachNumberIsDecidedByItsRegionAndType() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start(Self.generous { $0.sms.regions = .init(mode: .deny, regions: ["JM"]) })
            var messages: [String: String] = [:]
            for (n, entry) in Self.numbers.enumerated() {
                // What the policy decides on: the library's reading of the number.
                let info = try PhoneNumberClassifier.classify(try PhoneNumber(entry.number))
                #expect(info.regionCode == entry.region && info.type == entry.type, "\(entry.number): \(info.regionCode) \(info.type)")
                // Fixed numbers: a tenant of this test's own, so its codes are not another run's
                // (a pending code's sends count against sms.fallback.max_paid_sends).
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-p\(n)", phoneNumber: entry.number, tenant: harness.namespace)
                messages[job.verificationID] = try await harness.enqueue(job)
            }
            try await eventually("all decided") {
                let statuses = try await harness.statuses(Array(messages.values))
                return statuses.count == Self.numbers.count && statuses.values.allSatisfy { $0 == "completed" || $0 == "rejected" }
            }
            let events = try await sms.events.take(atLeast: Self.numbers.count)
            for (n, entry) in Self.numbers.enumerated() {
                let id = "\(harness.namespace)-p\(n)"
                let verification = try #require(try await sms.verification(id))
                if let reason = entry.reason {
                    #expect(verification.state == "refused" && verification.reason == reason, "\(entry.number): \(verification)")
                    let refused = events.first { $0.0 == "sms.refused" && $0.1["verification_id"] as? String == id }
                    #expect(refused?.1["reason"] as? String == reason)
                    #expect(refused?.1["region"] as? String == entry.region)
                    #expect(refused?.1["number_type"] as? String == entry.type.rawValue)
                    #expect(!sms.delivered().contains { $0.verificationID == id })
                } else {
                    #expect(verification.state == "sent", "\(entry.number): \(verification)")
                    #expect(sms.delivered().contains { $0.verificationID == id && $0.to == entry.number })
                }
            }
            try await worker.stop()
        }
    }

    /// Numbers in E.164 syntax that no range assigns: dead-lettered with a reason naming the
    /// field; nothing sent or recorded.
    @Test(arguments: [
        ("+1201555012", "phone_number is too short for +1"),
        ("+120155501234", "phone_number is too long for +1"),
        ("+447700900123", "phone_number is in no assigned range of +44"),
        ("+2812345678", "phone_number starts with no assigned country calling code"),
    ])
    func numbersNotInUseAreInvalidNamingTheField(number: String, reason: String) async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start(Self.generous())
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-bad", phoneNumber: number)
            let message = try await harness.enqueue(job)
            var letterReason: String?
            try await eventually("dead-lettered") {
                for letter in try await harness.drainDeadLetters(.sms) where letter.properties.messageID == message {
                    if let text = letter.properties.deadLetterStamp?.reason { letterReason = text }
                }
                return letterReason != nil
            }
            #expect(letterReason?.contains(reason) == true, "\(letterReason ?? "")")
            #expect(letterReason?.contains(number.dropFirst(4)) == false, "the reason must not echo the number")
            #expect(try await sms.verification(job.verificationID) == nil)
            #expect(sms.delivered().isEmpty)
            try await worker.stop()
        }
    }

    /// Only these regions: the rest refused, whatever their calling code shares.
    @Test func anAllowListRefusesEveryOtherRegionOfTheSameCallingCode() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start(Self.generous { $0.sms.regions = .init(mode: .allow, regions: ["US"]) })
            let us = SMSVerificationJob(verificationID: "\(harness.namespace)-us", phoneNumber: "+12015550123", tenant: harness.namespace)
            let dominican = SMSVerificationJob(verificationID: "\(harness.namespace)-do", phoneNumber: "+18092345678", tenant: harness.namespace)
            let ids = [try await harness.enqueue(us), try await harness.enqueue(dominican)]
            try await eventually("decided") {
                let statuses = try await harness.statuses(ids)
                return statuses.count == 2 && statuses.values.allSatisfy { $0 == "completed" || $0 == "rejected" }
            }
            #expect(try await sms.verification(us.verificationID)?.state == "sent")
            #expect(try await sms.verification(dominican.verificationID)?.reason == "region_not_allowed:DO")
            try await worker.stop()
        }
    }

    /// A region's cap refuses past its maximum, and only then; other regions keep flowing.
    @Test(arguments: ["hour", "day"])
    func aRegionCapRefusesPastItsMaximumOnly(window: String) async throws {
        try await withHarness() { harness in
            // The region's counters are shared by every test: start this window's from zero.
            try await harness.database.query("DELETE FROM herald.sms_rate_counters WHERE scope = \("region_\(window)") AND key = 'JM'", logger: harness.logger)
            let sms = try await SMSFixture(harness)
            let cap = window == "hour" ? SMSConfiguration.RegionCaps.Cap(hour: 2) : .init(day: 2)
            let worker = try await sms.start(Self.generous { $0.sms.regionCaps = .init(regions: ["JM": cap]) })
            let suffix = Int.random(in: 0..<1000) * 10
            var states: [String] = []
            for n in 0..<3 {
                let job = SMSVerificationJob(verificationID: "\(harness.namespace)-jm\(n)", phoneNumber: "+1876210" + String(format: "%04d", suffix + n))
                let id = try await harness.enqueue(job)
                try await eventually("decided") { ["completed", "rejected"].contains(try await harness.ledger(id)?.0 ?? "") }
                states.append(try await sms.verification(job.verificationID).map { "\($0.state) \($0.reason ?? "")" } ?? "none")
            }
            #expect(states == ["sent ", "sent ", "refused rate_limited:region_\(window)"])
            // Another region, under the default (no cap), is not slowed. A number of its own: the
            // suite's other tests send +1 809 234 5678 at the same time, and a second request for a
            // number within sms.resend_interval_seconds is answered with the code sent (`reused`).
            let other = SMSVerificationJob(verificationID: "\(harness.namespace)-do", phoneNumber: "+1809234" + String(format: "%04d", Int.random(in: 0..<5000)))
            let id = try await harness.enqueue(other)
            try await eventually("decided") { try await harness.ledger(id)?.0 == "completed" }
            #expect(try await sms.verification(other.verificationID)?.state == "sent")
            try await worker.stop()
        }
    }

    /// Bad policy configuration stops a real herald-sms at start (exit 78) naming the key.
    @Test(arguments: [
        (["HERALD_SMS_REGIONS_ALLOW": "US,GB,XX"], "sms.regions.allow[2]"),
        (["HERALD_SMS_REGIONS_ALLOW": "US", "HERALD_SMS_REGIONS_DENY": "JM"], "sms.regions"),
        (["HERALD_SMS_REGIONS_CALLING_CODES": "1,44"], "sms.regions.calling_codes"),
        (["HERALD_SMS_NUMBER_TYPES_ALLOW": "mobile,premium"], "sms.number_types.allow[1]"),
    ])
    func aBadPolicyStopsTheWorkerNamingTheKey(environment: [String: String], key: String) async throws {
        try await withHarness() { harness in
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: environment)
            #expect(await worker.waitForExit(timeout: .seconds(10)) == 78)
            #expect(worker.log.contains(key), "\(worker.log)")
        }
    }

    /// Limits that other tests' sends to the same fixed numbers never reach; no resend reuse.
    static func generous(_ configure: @escaping (inout HeraldConfiguration) -> Void = { _ in }) -> (inout HeraldConfiguration) -> Void {
        { configuration in
            configuration.sms.resendIntervalSeconds = 0
            configuration.sms.phoneLimit = .init(max: 100_000, windowSeconds: 3600)
            configuration.sms.prefixLimit = .init(max: 100_000, windowSeconds: 3600)
            configure(&configuration)
        }
    }
}
