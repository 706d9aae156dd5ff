import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The voice channel and fallback between channels (docs/voice.md, docs/fallback.md): herald-sms
/// in-process with the Twilio stand-in (Messages and Calls) and the WhatsApp stand-in, whose signed
/// status callbacks reach the real herald-api; the `sms.fallback` jobs go through the broker's
/// wait queues and the event outbox.
@Suite(.needsServers) struct SMSFallbackTests {
    /// A test's herald-sms fixture, the Twilio (messages and calls) and WhatsApp stand-ins (closed
    /// with the harness, however the test ends), and herald-api taking their callbacks (and
    /// serving Verify's `call` channel with `calls`).
    static func standIns(_ harness: Harness, calls: Bool = false) async throws -> (SMSFixture, TwilioStubServer, WhatsAppStubServer, APIProcess) {
        let sms = try await SMSFixture(harness)
        let twilio = try await TwilioStubServer(authToken: SMSReceiptTests.twilioToken)
        harness.onClose { await twilio.close() }
        let whatsapp = try await WhatsAppStubServer()
        harness.onClose { await whatsapp.close() }
        var environment = [
            "HERALD_SMS_WHATSAPP_BASE_URL": whatsapp.baseURL, "HERALD_SMS_WHATSAPP_PHONE_NUMBER_ID": whatsapp.phoneNumberID,
            "HERALD_SMS_WHATSAPP_ACCESS_TOKEN": whatsapp.accessToken, "HERALD_SMS_WHATSAPP_TEMPLATE": whatsapp.template,
            "HERALD_SMS_WHATSAPP_APP_SECRET": whatsapp.appSecret, "HERALD_SMS_ALLOW_INSECURE_TRANSPORT": "true",
        ]
        if calls {
            environment["HERALD_SMS_VOICE_FROM"] = "+15005550006"
            environment["HERALD_SMS_TWILIO_ACCOUNT_SID"] = twilio.accountSID
        }
        return (sms, twilio, whatsapp, try await SMSReceiptTests.api(harness, extra: environment))
    }

    /// SMS and calls through `twilio`, WhatsApp through `whatsapp`, every receipt to `api`.
    static func channels(_ configuration: inout HeraldConfiguration, _ twilio: TwilioStubServer, _ whatsapp: WhatsAppStubServer, _ api: APIProcess) {
        SMSReceiptTests.twilio(&configuration, twilio, api)
        SMSWhatsAppTests.whatsapp(&configuration, whatsapp)
        configuration.sms.voice.from = "+15005550006"
        configuration.sms.voice.templatesDirectory = TestEnvironment.root.appendingPathComponent("Config/templates/voice").path
        configuration.sms.allowInsecureTransport = true
    }

    /// The digits a call said, in order.
    static func digits(_ text: String) -> String { String(text.filter { $0.isASCII && $0.isNumber }) }

    /// A call reads the code slowly (a pause between digits), twice, in the job's language; its
    /// signed status callbacks reach the attempt (answered: delivered); the code verifies.
    @Test func aCallReadsTheCodeTwiceInTheVerificationsLanguage() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            _ = try await sms.start { Self.channels(&$0, twilio, whatsapp, api) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-call", phoneNumber: harness.phone(1), locale: "de", channel: .voice)
            _ = try await harness.enqueue(job)
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }

            let call = try #require(twilio.calls.calls.first)
            #expect(call.to == job.phoneNumber && call.from == "+15005550006" && call.timeout == 30)
            #expect(call.says.count == 2 && call.says.allSatisfy { $0.language == "de-DE" } && call.says[0].text == call.says[1].text, "\(call.says)")
            #expect(call.says[0].text.hasPrefix("Ihr Herald Bestätigungscode lautet"), "\(call.says[0].text)")
            let code = Self.digits(call.says[0].text)
            #expect(code.count == 6 && call.says[0].text.contains(code.map(String.init).joined(separator: ", ")))
            #expect(call.events == ["initiated", "ringing", "answered", "completed"])
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            #expect(attempt.provider == "twilio_voice" && attempt.providerMessageID == call.sid)
            try await eventually("every callback answered") { twilio.calls.posted.count == 4 }
            #expect(twilio.calls.posted.allSatisfy { $0.answer == 204 }, "\(twilio.calls.posted)")
            #expect(twilio.messages.isEmpty, "no SMS went out")
            let sent = try #require(try await sms.events.first("sms.sent"))
            #expect(sent.1["channel"] as? String == "voice" && sent.1["segments"] == nil)
        }
    }

    /// The webhook voice provider (the operator's own telephony): a signed `voice.call` with the
    /// text to say, its language and `repeat` 2; its receipt, to the webhook receipt endpoint,
    /// reaches the attempt; the code verifies.
    @Test func aWebhookPlacesTheCall() async throws {
        try await withHarness { harness in
            let (sms, _, _, api) = try await Self.standIns(harness)
            let calls = LockedBox<[StubHTTPServer.Request]>([])
            let callID = "call-" + UUID().uuidString.lowercased()
            let hook = try await StubHTTPServer { request in
                calls.withLock { $0.append(request) }
                return .init(status: 200, body: #"{"message_id":"\#(callID)"}"#)
            }
            harness.onClose { await hook.close() }
            _ = try await sms.start {
                SMSReceiptTests.receipts(&$0, api)
                SMSProviderTests.webhook(&$0, hook)
                $0.sms.voice.providers = [.webhook]
                $0.sms.voice.webhookURL = hook.baseURL + "/call"
                $0.sms.voice.templatesDirectory = TestEnvironment.root.appendingPathComponent("Config/templates/voice").path
                $0.sms.allowInsecureTransport = true
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-wv", phoneNumber: harness.phone(9), locale: "pt-BR", channel: .voice)
            _ = try await harness.enqueue(job)
            try await eventually("called") { calls.withLock { !$0.isEmpty } }
            let request = try #require(calls.withLock { $0.first })
            #expect(request.path == "/call")
            let key = try #require(StandardWebhooks.key(secret: SMSProviderTests.webhookSecret))
            #expect(throws: Never.self) {
                try StandardWebhooks.verify(id: request.header("webhook-id"), timestamp: request.header("webhook-timestamp"),
                                            signatures: request.header("webhook-signature"), body: request.body, key: key)
            }
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            let data = try #require(body["data"] as? [String: Any])
            let text = try #require(data["text"] as? String)
            #expect(body["type"] as? String == "voice.call" && data["language"] as? String == "pt-BR" && data["repeat"] as? Int == 2
                    && data["to"] as? String == job.phoneNumber && data["segments"] == nil, "\(body)")
            let code = Self.digits(text)
            #expect(code.count == 6 && text.contains(code.map(String.init).joined(separator: ", ")) && text.hasPrefix("Seu código"), "\(text)")
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            let receipt = try await SMSReceiptTests.webhookReceipt(api, messageID: callID, status: "delivered")
            #expect(receipt.status == 204, "\(receipt)")
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }
            #expect(try await sms.attempts(job.verificationID).first?.provider == "webhook")
        }
    }

    /// The SMS is reported undelivered: the same code goes out over WhatsApp at once (not after
    /// the SMS's wait); the wait's own job for that step later finds it taken, and sends nothing.
    @Test func anUndeliveredSMSFallsBackToWhatsAppWithTheSameCode() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            twilio.script([.init("sent"), .init("undelivered", errorCode: "30003")])
            whatsapp.script([])
            _ = try await sms.start {
                Self.channels(&$0, twilio, whatsapp, api)
                $0.sms.fallback.afterSeconds[.sms] = 3
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-fb", phoneNumber: harness.phone(2), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(job)
            try await eventually("sent over WhatsApp") { whatsapp.messages.count == 1 }
            let smsText = try #require(twilio.messages.first).body
            let smsCode = try #require(SMSFixture.code(in: smsText, length: 6))
            #expect(whatsapp.messages[0].code == smsCode, "one verification, one code")
            // The stand-in has the message before the worker records the provider's answer: wait for the record.
            // (The verification was already `sent` by the SMS, and stays so while its fallback runs.)
            try await eventually("WhatsApp's attempt recorded") { try await sms.attempts(job.verificationID).count >= 2 }
            #expect(try await sms.verification(job.verificationID)?.state == "sent")
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.map(\.provider) == ["twilio", "whatsapp"] && attempts[0].delivery?.status == .undelivered, "\(attempts)")
            let fallback = try await Self.event(sms, "sms.fallback")
            #expect(fallback["from_channel"] as? String == "sms" && fallback["to_channel"] as? String == "whatsapp"
                    && fallback["reason"] as? String == "undelivered" && fallback["step"] as? Int == 1, "\(fallback)")
            #expect(try await Self.channel(harness, job.verificationID) == "whatsapp")

            // The SMS's wait ends: its job for step 1 is the same job (one message id): nothing more.
            try await Task.sleep(for: .seconds(4))
            #expect(whatsapp.messages.count == 1 && twilio.messages.count == 1)
            #expect(try await sms.verify(job.verificationID, smsCode) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            #expect(try await Self.fallbackRows(harness, job.verificationID) == 0, "the last channel sent: the sealed code is gone")
        }
    }

    /// The real Kannel accepts an SMS and reports it undelivered (its refusing SMSC, the numbers
    /// of HERALD_DEV_KANNEL_UNDELIVERED: a DLR 16): the same code goes out over WhatsApp.
    @Test func kannelsUndeliveredReportFallsBackToWhatsApp() async throws {
        try await withHarness { harness in
            let (sms, _, whatsapp, api) = try await Self.standIns(harness)
            whatsapp.script([])
            _ = try await sms.start {
                SMSReceiptTests.receipts(&$0, api)
                SMSWhatsAppTests.whatsapp(&$0, whatsapp)
                $0.sms.providers = [.kannel]
                $0.sms.kannel.url = SMSReceiptTests.kannelURL
                $0.sms.kannel.username = "herald"
                $0.sms.kannel.password = "herald-dev"
                $0.sms.allowInsecureTransport = true
            }
            let prefix = ProcessInfo.processInfo.environment["HERALD_DEV_KANNEL_UNDELIVERED"] ?? "+1650555"
            let phone = prefix + String(format: "01%02d", Int.random(in: 0...99))
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-kd", phoneNumber: phone, channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(job)
            try await eventually("sent over WhatsApp") { whatsapp.messages.contains { $0.to == String(phone.dropFirst()) } }
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.first?.provider == "kannel" && attempts.first?.delivery?.status == .undelivered
                    && attempts.first?.delivery?.errorCode == "kannel-16", "\(attempts)")
            let code = try #require(whatsapp.messages.first { $0.to == String(phone.dropFirst()) }?.code)
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: phone, purpose: .signIn))
        }
    }

    /// WhatsApp never reports: after its wait (a wait queue, not a sleeping worker) the call goes
    /// out, reason timeout.
    @Test func whatsAppWithoutADeliveryFallsBackToACallAfterItsWait() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            whatsapp.script([])
            _ = try await sms.start {
                Self.channels(&$0, twilio, whatsapp, api)
                $0.sms.fallback.afterSeconds[.whatsapp] = 2
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-to", phoneNumber: harness.phone(3), channels: [.whatsapp, .voice])
            let started = Date()
            _ = try await harness.enqueue(job)
            try await eventually("sent over WhatsApp") { whatsapp.messages.count == 1 }
            #expect(twilio.calls.calls.isEmpty)
            #expect(try await harness.depth(harness.topology.waitQueue(.sms, seconds: 2)) <= 1)
            try await eventually(timeout: .seconds(20), "called") { twilio.calls.calls.count == 1 }
            #expect(Date().timeIntervalSince(started) >= 2, "not before the wait")
            #expect(Self.digits(twilio.calls.calls[0].says[0].text) == whatsapp.messages[0].code)
            #expect(try await Self.event(sms, "sms.fallback")["reason"] as? String == "timeout")
            try await eventually("the call delivered") { try await sms.attempts(job.verificationID).last?.delivery?.status == .delivered }
        }
    }

    /// A delivered SMS needs no other channel: the wait's job finds it delivered, and the sealed
    /// code is deleted. A channel whose providers are down hands over at once, in the same job.
    @Test func aDeliveredSendEndsTheFallbackAndADownProviderHandsOver() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            _ = try await sms.start {
                Self.channels(&$0, twilio, whatsapp, api)
                $0.sms.fallback.afterSeconds[.sms] = 1
            }
            let delivered = SMSVerificationJob(verificationID: "\(harness.namespace)-dl", phoneNumber: harness.phone(4), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(delivered)
            try await eventually("delivered") { try await sms.attempts(delivered.verificationID).first?.delivery?.status == .delivered }
            try await eventually(timeout: .seconds(15), "the fallback ended") { try await Self.fallbackRows(harness, delivered.verificationID) == 0 }
            try await Task.sleep(for: .seconds(1))
            #expect(whatsapp.messages.isEmpty)

            twilio.down(true)
            let down = SMSVerificationJob(verificationID: "\(harness.namespace)-dn", phoneNumber: harness.phone(5), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(down)
            try await eventually("sent over WhatsApp") { whatsapp.messages.contains { $0.to == String(down.phoneNumber.dropFirst()) } }
            try await eventually("WhatsApp's attempt recorded") { try await sms.attempts(down.verificationID).count >= 2 }
            #expect(try await sms.verification(down.verificationID)?.state == "sent")
            let attempts = try await sms.attempts(down.verificationID)
            #expect(attempts.map(\.provider) == ["twilio", "whatsapp"] && attempts[0].result == .transient, "\(attempts)")
            let fallback = try await Self.event(sms, "sms.fallback")
            #expect(fallback["reason"] as? String == "failed" && fallback["verification_id"] as? String == down.verificationID, "\(fallback)")
        }
    }

    /// A code used before its fallback: the wait's job finds it verified and sends nothing. And
    /// one used while its fallback job waits to try again (WhatsApp down): the retry finds it
    /// verified too, and sends nothing once WhatsApp is back. The verification stays `sent`
    /// throughout (the fraud guard counts it once).
    @Test func aVerifiedCodeEndsItsFallbackAtTheWaitAndOnARetry() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            twilio.script([])
            whatsapp.script([])
            _ = try await sms.start {
                Self.channels(&$0, twilio, whatsapp, api)
                $0.sms.fallback.afterSeconds[.sms] = 1
            }
            let early = SMSVerificationJob(verificationID: "\(harness.namespace)-ve", phoneNumber: harness.phone(7), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(early)
            try await eventually("texted") { twilio.messages.contains { $0.to == early.phoneNumber } }
            let earlyText = try #require(twilio.messages.first { $0.to == early.phoneNumber }).body
            #expect(try await sms.verify(early.verificationID, try #require(SMSFixture.code(in: earlyText, length: 6))) == .verified(phoneNumber: early.phoneNumber, purpose: .signIn))
            try await eventually("the fallback ended") { try await Self.fallbackRows(harness, early.verificationID) == 0 }
            try await Task.sleep(for: .seconds(1))
            #expect(whatsapp.messages.isEmpty)

            whatsapp.down(true)
            let late = SMSVerificationJob(verificationID: "\(harness.namespace)-vl", phoneNumber: harness.phone(8), channels: [.sms, .whatsapp])
            _ = try await harness.enqueue(late)
            try await eventually("the fallback's first try failed") { try await Self.fallbackState(harness, late.verificationID) == "retrying" }
            #expect(try await sms.verification(late.verificationID)?.state == "sent")
            let lateText = try #require(twilio.messages.first { $0.to == late.phoneNumber }).body
            #expect(try await sms.verify(late.verificationID, try #require(SMSFixture.code(in: lateText, length: 6))) == .verified(phoneNumber: late.phoneNumber, purpose: .signIn))
            whatsapp.down(false)
            try await eventually(timeout: .seconds(30), "the retry ended it") { try await Self.fallbackRows(harness, late.verificationID) == 0 }
            #expect(whatsapp.messages.isEmpty, "a used code is never sent again")
            #expect(try await sms.verification(late.verificationID)?.state == "sent")
        }
    }

    /// A landline takes a call, not an SMS: a list [sms, voice] for it calls at once; a list
    /// with no channel the number can take is refused with the first reason.
    @Test func aLandlineIsCalledNotTexted() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness)
            _ = try await sms.start { Self.channels(&$0, twilio, whatsapp, api) }
            // A Berlin landline (libphonenumber: fixed_line).
            let landline = "+49302" + String(Int.random(in: 1_000_000...9_999_999))
            let called = SMSVerificationJob(verificationID: "\(harness.namespace)-ll", phoneNumber: landline, channels: [.sms, .voice])
            _ = try await harness.enqueue(called)
            try await eventually("called") { twilio.calls.calls.contains { $0.to == landline } }
            #expect(twilio.messages.isEmpty)
            let texted = SMSVerificationJob(verificationID: "\(harness.namespace)-lt", phoneNumber: landline, channels: [.sms])
            let id = try await harness.enqueue(texted)
            try await eventually("refused") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(try await sms.verification(texted.verificationID)?.reason == "number_type_not_allowed:fixed_line")
        }
    }

    /// Twilio Verify's `Channel=call` where herald-api has calls: the code is read out; a resend
    /// over SMS is a second send attempt, and the verification's channel is the last one used.
    @Test func twilioVerifysCallChannelAndEveryAttemptListed() async throws {
        try await withHarness { harness in
            let (sms, twilio, whatsapp, api) = try await Self.standIns(harness, calls: true)
            _ = try await sms.start { Self.channels(&$0, twilio, whatsapp, api) }
            let form = "application/x-www-form-urlencoded"
            let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=Calls", contentType: form)
            let serviceSid = try #require(service.json["sid"] as? String, "\(service)")
            let to = harness.phone(6)
            let encoded = to.replacingOccurrences(of: "+", with: "%2B")
            let called = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(encoded)&Channel=call&Locale=es", contentType: form)
            #expect(called.status == 201 && called.json["channel"] as? String == "call", "\(called)")
            try await eventually("called") { twilio.calls.calls.contains { $0.to == to } }
            let call = try #require(twilio.calls.calls.first { $0.to == to })
            #expect(call.says.first?.language == "es-ES", "\(call.says)")
            let texted = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications", body: "To=\(encoded)&Channel=sms", contentType: form)
            let attempts = try #require(texted.json["send_code_attempts"] as? [[String: Any]], "\(texted)")
            #expect(attempts.map { $0["channel"] as? String } == ["call", "sms"] && texted.json["channel"] as? String == "sms", "\(texted)")
            try await eventually("texted") { twilio.messages.contains { $0.to == to } }
            let text = try #require(twilio.messages.first { $0.to == to }).body
            let code = try #require(SMSFixture.code(in: text, length: 6))
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck", body: "To=\(encoded)&Code=\(code)", contentType: form)
            #expect(check.json["status"] as? String == "approved", "\(check)")
        }
    }

    /// The first event named `name` the channel emits from now on (those before it are read and dropped).
    static func event(_ sms: SMSFixture, _ name: String) async throws -> [String: Any] {
        let box = EventBox()
        try await eventually("an event \(name)") {
            box.append(try await sms.events.take())
            return box.all.contains { $0.0 == name }
        }
        return try #require(box.all.first { $0.0 == name }?.1)
    }

    static func channel(_ harness: Harness, _ id: String) async throws -> String? {
        let rows = try await harness.database.query("SELECT channel FROM herald.sms_verifications WHERE verification_id = \(id)", logger: harness.logger)
        for try await channel in rows.decode(String?.self) { return channel }
        return nil
    }

    static func fallbackState(_ harness: Harness, _ id: String) async throws -> String? {
        let rows = try await harness.database.query("SELECT state FROM herald.sms_fallbacks WHERE verification_id = \(id)", logger: harness.logger)
        for try await state in rows.decode(String.self) { return state }
        return nil
    }

    static func fallbackRows(_ harness: Harness, _ id: String) async throws -> Int {
        let rows = try await harness.database.query("SELECT count(*)::int FROM herald.sms_fallbacks WHERE verification_id = \(id)", logger: harness.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
