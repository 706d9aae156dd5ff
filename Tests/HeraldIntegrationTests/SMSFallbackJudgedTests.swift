import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// Every paid send judged (issue 46, docs/abuse.md "Fallbacks and the fraud guard"): a fallback's
/// next channel meets the fraud guard, the per-IP limit of the request that started it and the
/// code's budget of paid sends, and any delivered send ends it. herald-sms in-process with the
/// Twilio and WhatsApp stand-ins, their receipts through the real herald-api.
/// Serialized: the guard's counts are per region and prefix (each test's prefix is its own, the
/// region's floor out of reach).
@Suite(.needsServers, .serialized) struct SMSFallbackJudgedTests {
    /// herald-sms with every channel, the SMS's wait `wait` seconds; WhatsApp's statuses and
    /// Twilio's callbacks reach herald-api.
    static func start(_ harness: Harness, wait: Int, _ change: @escaping @Sendable (inout HeraldConfiguration) -> Void = { _ in })
        async throws -> (SMSFixture, TwilioStubServer, WhatsAppStubServer) {
        let (sms, twilio, whatsapp, api) = try await SMSFallbackTests.standIns(harness, calls: true)
        whatsapp.webhook("http://127.0.0.1:\(api.port)/v1/receipts/whatsapp")
        _ = try await sms.start {
            SMSFallbackTests.channels(&$0, twilio, whatsapp, api)
            $0.sms.fallback.afterSeconds[.sms] = wait
            change(&$0)
        }
        return (sms, twilio, whatsapp)
    }

    /// The fallback's job has run to its end: the verification's send was recorded (a provider
    /// that has the message does not mean its worker committed: until then there is no fallback
    /// row to be gone), and its fallback row is gone.
    static func ended(_ sms: SMSFixture, _ harness: Harness, _ id: String) async throws {
        try await eventually(timeout: .seconds(20), "the fallback of \(id) ended") {
            guard let verification = try await sms.verification(id), verification.state != "sending" else { return false }
            return try await SMSFallbackTests.fallbackRows(harness, id) == 0
        }
    }

    /// A prefix whose codes go unverified is paused by the fallback's own judgment: neither
    /// verification's WhatsApp goes out, and the pause is the guard's (its event, once).
    @Test func aPrefixPausedMeanwhilePausesItsFallbacks() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 2) {
                $0.sms.fraudGuard.enabled = true
                $0.sms.fraudGuard.prefixFloor = 2
                $0.sms.fraudGuard.regionFloor = 1000
                $0.sms.fraudGuard.prefixDigits = 8
                $0.sms.fraudGuard.minConversion = 0.5
            }
            twilio.script([.init("sent")])
            whatsapp.script([])
            // A Belgian mobile range of its own (FraudGuardTests pause and clear France).
            let range = "+3247" + String(format: "%04d", Int.random(in: 0..<10_000))
            let jobs = (1...2).map { SMSVerificationJob(verificationID: "\(harness.namespace)-gp\($0)", phoneNumber: range + String(format: "%03d", $0),
                                                        channels: [.sms, .whatsapp]) }
            for job in jobs { _ = try await harness.enqueue(job) }
            // Both first sends go out (the floor is 2): the prefix has sent 2, verified none.
            try await eventually("both SMS sent") { twilio.messages.count == 2 }
            for job in jobs { try await Self.ended(sms, harness, job.verificationID) }
            #expect(whatsapp.messages.isEmpty, "a paused prefix pays for no fallback")
            let events = try await sms.events.take(atLeast: 3)
            let paused = events.filter { $0.0 == "sms.fraud_guard.paused" }
            #expect(paused.count == 1 && paused.first?.1["reason"] as? String == "fraud_guard:prefix:\(range)", "\(events.map(\.0))")
            for job in jobs {
                let verification = try await sms.verification(job.verificationID)
                #expect(verification?.state == "sent" && verification?.reason == "fallback_refused:fraud_guard:prefix:\(range)",
                        "the first send stands; the fallback's refusal is recorded")
            }
        }
    }

    /// The request's IP had one send left: the fallback's would be its second, and is refused.
    @Test func aFallbackTakesThePerIPLimitOfTheRequestThatStartedIt() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 1) { $0.sms.ipLimit = .init(max: 1, windowSeconds: 3600) }
            twilio.script([.init("sent")])
            whatsapp.script([])
            let ip = "198.51.100.\(Int.random(in: 1...254))"
            var job = SMSVerificationJob(verificationID: "\(harness.namespace)-ip", phoneNumber: harness.phone(1), channels: [.sms, .whatsapp])
            job.client = .init(ip: ip)
            try await harness.database.query("DELETE FROM herald.sms_rate_counters WHERE scope = 'ip' AND key = \(ip)", logger: harness.logger)
            _ = try await harness.enqueue(job)
            try await eventually("sent") { twilio.messages.count == 1 }
            try await Self.ended(sms, harness, job.verificationID)
            #expect(whatsapp.messages.isEmpty)
            let verification = try await sms.verification(job.verificationID)
            let events = try await sms.events.take(atLeast: 1).map(\.0)
            #expect(verification?.reason == "fallback_refused:rate_limited:ip", "\(String(describing: verification)), \(events)")
        }
    }

    /// Three channels and `max_paid_sends: 2`: the SMS and WhatsApp are sent, the call is not.
    @Test func theBudgetOfPaidSendsStopsTheThirdChannel() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 1) {
                $0.sms.fallback.afterSeconds[.whatsapp] = 1
                $0.sms.fallback.maxPaidSends = 2
            }
            twilio.script([.init("sent")])
            whatsapp.script([])
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-bu", phoneNumber: harness.phone(2), channels: [.sms, .whatsapp, .voice])
            _ = try await harness.enqueue(job)
            try await eventually(timeout: .seconds(20), "sent over WhatsApp") { whatsapp.messages.count == 1 }
            try await Self.ended(sms, harness, job.verificationID)
            #expect(twilio.calls.calls.isEmpty, "the third paid send is past the budget")
            #expect(try await sms.attempts(job.verificationID).map(\.provider) == ["twilio", "whatsapp"])
            #expect(try await sms.verification(job.verificationID)?.reason == "fallback_refused:rate_limited:paid_sends")
        }
    }

    /// WhatsApp takes the message and never answers (a timeout after the request was written:
    /// it may arrive). The SMS waits for WhatsApp's wait, not going out the moment the call timed
    /// out, and then goes with reason timeout.
    @Test func anUncertainSendIsWaitedForNotTakenForDown() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 60) {
                $0.sms.fallback.afterSeconds[.whatsapp] = 4
                $0.sms.providerTimeoutMilliseconds = 500
            }
            twilio.script([.init("sent")])
            whatsapp.hang(1)
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-un", phoneNumber: harness.phone(4), channels: [.whatsapp, .sms])
            let started = Date()
            _ = try await harness.enqueue(job)
            try await eventually("WhatsApp took it") { whatsapp.messages.count == 1 }
            try await eventually("the uncertain send recorded") { try await sms.verification(job.verificationID)?.state == "sent" }
            #expect(twilio.messages.isEmpty, "not the next channel at once")
            #expect(try await sms.attempts(job.verificationID).map(\.result) == [.timeout])
            try await eventually(timeout: .seconds(20), "the SMS after WhatsApp's wait") { twilio.messages.count == 1 }
            #expect(Date().timeIntervalSince(started) >= 4, "not before the wait")
            #expect(try await SMSFallbackTests.event(sms, "sms.fallback")["reason"] as? String == "timeout")
            #expect(SMSFixture.code(in: try #require(twilio.messages.first).body, length: 6) == whatsapp.messages[0].code, "one code")
        }
    }

    /// The SMS is delivered after WhatsApp went out, then WhatsApp fails: the code arrived, so
    /// no call follows (the newest send's failure is not the verification's).
    @Test func anyDeliveredSendEndsTheFallback() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 1) { $0.sms.fallback.maxPaidSends = 3 }
            twilio.script([.init("sent"), .init("delivered", after: .seconds(3))])
            whatsapp.script([.init("failed", errorCode: 131026, after: .seconds(5))])
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-ad", phoneNumber: harness.phone(3), channels: [.sms, .whatsapp, .voice])
            _ = try await harness.enqueue(job)
            try await eventually(timeout: .seconds(20), "sent over WhatsApp") { whatsapp.messages.count == 1 }
            try await eventually(timeout: .seconds(20), "WhatsApp's failure recorded") {
                try await sms.attempts(job.verificationID).last?.delivery?.status == .undelivered
            }
            #expect(try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered)
            try await Self.ended(sms, harness, job.verificationID)
            try await Task.sleep(for: .seconds(1))
            #expect(twilio.calls.calls.isEmpty, "the SMS was delivered: no call")
        }
    }

    /// The SMS's attempt reported delivered, as its receipt would set it.
    static func markSMSDelivered(_ harness: Harness, _ id: String) async throws {
        try await harness.database.query("""
            UPDATE herald.sms_send_attempts SET delivery_status = 'delivered'
             WHERE verification_id = \(id) AND provider = 'twilio'
            """, logger: harness.logger)
    }

    /// A verification over [sms, whatsapp, voice] whose fallback's step, WhatsApp after the SMS,
    /// refuses the code 6 s after it arrives; `meanwhile` runs once WhatsApp has the request (the
    /// step surely began), and this returns once WhatsApp's refusal is recorded and the fallback
    /// has ended.
    static func stepRefusedSlowly(_ harness: Harness, _ suffix: String, phone: Int,
                                  meanwhile: (String) async throws -> Void) async throws -> (SMSFixture, TwilioStubServer, String) {
        let (sms, twilio, whatsapp) = try await start(harness, wait: 1) {
            $0.sms.fallback.maxPaidSends = 3
            $0.sms.providerTimeoutMilliseconds = 20_000
        }
        twilio.script([.init("sent")])
        whatsapp.refuse(1, after: .seconds(6))
        let job = SMSVerificationJob(verificationID: "\(harness.namespace)-\(suffix)", phoneNumber: harness.phone(phone), channels: [.sms, .whatsapp, .voice])
        _ = try await harness.enqueue(job)
        try await eventually(timeout: .seconds(20), "WhatsApp has the request") { whatsapp.refused == 1 }
        try await meanwhile(job.verificationID)
        try await eventually(timeout: .seconds(20), "WhatsApp's refusal recorded") { try await sms.attempts(job.verificationID).count >= 2 }
        try await ended(sms, harness, job.verificationID)
        try await Task.sleep(for: .seconds(1))
        return (sms, twilio, job.verificationID)
    }

    /// WhatsApp, the fallback's step after the SMS, refuses the code slowly, and the code expires
    /// meanwhile: the call after WhatsApp does not go out in the same job (the one judgment of every
    /// step decides there too), the fallback ends, and the verification stays `sent`.
    @Test func aCodeClosedWhileTheNextChannelRefusesEndsTheFallback() async throws {
        try await withHarness { harness in
            let (sms, twilio, id) = try await Self.stepRefusedSlowly(harness, "cc", phone: 5) { id in
                try await harness.database.query("""
                    UPDATE herald.sms_codes SET expires_at = now()
                     WHERE id = (SELECT code_id FROM herald.sms_verifications WHERE verification_id = \(id))
                    """, logger: harness.logger)
            }
            #expect(twilio.calls.calls.isEmpty, "the code expired: no call")
            #expect(try await sms.attempts(id).map(\.provider) == ["twilio", "whatsapp"])
            let verification = try await sms.verification(id)
            #expect(verification?.state == "sent" && verification?.reason == nil, "\(String(describing: verification))")
        }
    }

    /// The SMS is delivered while WhatsApp, its fallback's step, refuses the code slowly (its
    /// receipt set once WhatsApp has the request, so the step surely began before it): the call
    /// after WhatsApp does not go out in the same job, the fallback ends, and the verification
    /// stays `sent` with no failure to report.
    @Test func aSendDeliveredWhileTheNextChannelRefusesEndsTheFallback() async throws {
        try await withHarness { harness in
            let (sms, twilio, id) = try await Self.stepRefusedSlowly(harness, "dr", phone: 6) { try await Self.markSMSDelivered(harness, $0) }
            #expect(twilio.calls.calls.isEmpty, "the SMS was delivered: no call")
            let attempts = try await sms.attempts(id)
            #expect(attempts.map(\.provider) == ["twilio", "whatsapp"] && attempts[0].delivery?.status == .delivered, "\(attempts)")
            let verification = try await sms.verification(id)
            #expect(verification?.state == "sent" && verification?.reason == nil, "\(String(describing: verification))")
        }
    }

    /// WhatsApp, the fallback's step, is down, and the SMS is delivered while the step waits to try
    /// again: the retry is judged too (a send delivered), ends the fallback and sends nothing once
    /// WhatsApp is back; the verification stays `sent`, the retry's failure no longer its reason.
    @Test func aSendDeliveredWhileItsStepWaitsToRetryEndsTheFallback() async throws {
        try await withHarness(retryDelays: [1_500], maxAttempts: 5) { harness in
            let (sms, twilio, whatsapp) = try await Self.start(harness, wait: 1)
            twilio.script([])
            whatsapp.down(true)
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-rd", phoneNumber: harness.phone(7), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(job)
            try await eventually(timeout: .seconds(20), "the step's first try failed") {
                try await SMSFallbackTests.fallbackState(harness, job.verificationID) == "retrying"
            }
            try await Self.markSMSDelivered(harness, job.verificationID)
            whatsapp.down(false)
            try await eventually(timeout: .seconds(30), "the retry ended it") { try await SMSFallbackTests.fallbackRows(harness, job.verificationID) == 0 }
            try await Task.sleep(for: .seconds(1))
            #expect(whatsapp.messages.isEmpty, "the SMS was delivered: no WhatsApp")
            let verification = try await sms.verification(job.verificationID)
            #expect(verification?.state == "sent" && verification?.reason == nil, "\(String(describing: verification))")
        }
    }
}
