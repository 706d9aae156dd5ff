import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The same phone verification's code as a WhatsApp authentication template: herald-sms in-process
/// sending through the WhatsApp Cloud API stand-in, whose signed status webhooks reach the real
/// herald-api; Twilio Verify's `Channel=whatsapp` through herald-api.
@Suite(.needsServers) struct SMSWhatsAppTests {
    static let verifyToken = "wa-verify-token-for-tests"

    /// herald-api taking WhatsApp's webhooks (and serving Verify's whatsapp channel) for `stub`.
    static func api(_ harness: Harness, _ stub: WhatsAppStubServer) async throws -> APIProcess {
        try await APIProcess(harness, environment: [
            "HERALD_SMS_WHATSAPP_BASE_URL": stub.baseURL, "HERALD_SMS_WHATSAPP_PHONE_NUMBER_ID": stub.phoneNumberID,
            "HERALD_SMS_WHATSAPP_ACCESS_TOKEN": stub.accessToken, "HERALD_SMS_WHATSAPP_TEMPLATE": stub.template,
            "HERALD_SMS_WHATSAPP_APP_SECRET": stub.appSecret, "HERALD_SMS_WHATSAPP_VERIFY_TOKEN": verifyToken,
            "HERALD_SMS_ALLOW_INSECURE_TRANSPORT": "true",
        ])
    }

    static func whatsapp(_ configuration: inout HeraldConfiguration, _ stub: WhatsAppStubServer) {
        configuration.sms.whatsapp.baseURL = stub.baseURL
        configuration.sms.whatsapp.phoneNumberID = stub.phoneNumberID
        configuration.sms.whatsapp.accessToken = stub.accessToken
        configuration.sms.whatsapp.template = stub.template
        configuration.sms.whatsapp.languages = ["default": "en_US", "de": "de", "pt-br": "pt_BR"]
    }

    /// The code goes out as the template (body and copy-code button), in the job's language; it
    /// verifies like an SMS code; WhatsApp's sent, delivered and read reach the attempt through
    /// herald-api; `sms.sent` and `sms.delivered` say the channel and provider.
    @Test func aCodeGoesOutAsAWhatsAppTemplateAndItsStatusesComeBack() async throws {
        try await withReceiptHarness { harness in
            let sms = try await SMSFixture(harness)
            let stub = try await WhatsAppStubServer()
            stub.script([.init("sent"), .init("delivered"), .init("read")])
            let api = try await Self.api(harness, stub)
            stub.webhook("http://127.0.0.1:\(api.port)/v1/receipts/whatsapp")
            _ = try await sms.start { Self.whatsapp(&$0, stub) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-wa", phoneNumber: harness.phone(1), locale: "pt-BR", channel: .whatsapp)
            _ = try await harness.enqueue(job)
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }

            let message = try #require(stub.messages.first)
            #expect(message.to == String(job.phoneNumber.dropFirst()) && message.language == "pt_BR")
            #expect(try await sms.verify(job.verificationID, message.code) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            #expect(attempt.provider == "whatsapp" && attempt.providerMessageID == message.id && attempt.result == .accepted)
            #expect(sms.delivered().isEmpty, "no SMS went out")
            try await eventually("all three statuses answered") { stub.posted.count == 3 }
            #expect(stub.posted.allSatisfy { $0.answer == 200 }, "\(stub.posted)")
            let events = try await sms.events.take(atLeast: 2)
            let sent = try #require(events.first { $0.0 == "sms.sent" })
            #expect(sent.1["channel"] as? String == "whatsapp" && sent.1["provider"] as? String == "whatsapp" && sent.1["segments"] == nil)
            #expect(events.filter { $0.0 == "sms.delivered" }.count == 1)
            await stub.close()
        }
    }

    /// WhatsApp's `failed` (131026, undeliverable) is the attempt's `undelivered`, with the code.
    @Test func aFailedStatusIsUndeliveredWithWhatsAppsCode() async throws {
        try await withReceiptHarness { harness in
            let sms = try await SMSFixture(harness)
            let stub = try await WhatsAppStubServer()
            stub.script([.init("failed", errorCode: 131026)])
            let api = try await Self.api(harness, stub)
            stub.webhook("http://127.0.0.1:\(api.port)/v1/receipts/whatsapp")
            _ = try await sms.start { Self.whatsapp(&$0, stub) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-wf", phoneNumber: harness.phone(2), channel: .whatsapp)
            _ = try await harness.enqueue(job)
            try await eventually("undelivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .undelivered }
            #expect(try await sms.attempts(job.verificationID).first?.delivery?.errorCode == "whatsapp-131026")
            #expect(try await sms.events.first("sms.undelivered")?.1["error_code"] as? String == "whatsapp-131026")
            await stub.close()
        }
    }

    /// Meta throttles with a 400 (Graph error 130429): not the code's end, a retry through the
    /// delay queues, which WhatsApp then accepts.
    @Test func aThrottleIsRetriedNotFinal() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let stub = try await WhatsAppStubServer()
            stub.script([])
            stub.throttle(1)
            _ = try await sms.start { Self.whatsapp(&$0, stub) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-wt", phoneNumber: harness.phone(5), channel: .whatsapp)
            let id = try await harness.enqueue(job)
            try await eventually("sent on the retry") { try await harness.ledger(id)?.0 == "completed" }
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.map(\.result) == [.transient, .accepted] && attempts.first?.errorCode == "whatsapp-130429"
                    && attempts.first?.httpStatus == 400, "\(attempts)")
            #expect(try await sms.verification(job.verificationID)?.state == "sent")
            await stub.close()
        }
    }

    /// Meta's handshake is answered with its challenge for our verify token only; a webhook whose
    /// signature does not hold is 401; a status of a message Herald did not send is dropped; a job
    /// for WhatsApp where it is not configured is refused.
    @Test func theHandshakeAndForgedWebhooksAndAnUnconfiguredChannel() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let stub = try await WhatsAppStubServer()
            let api = try await Self.api(harness, stub)
            let good = try await api.call(.GET, "/v1/receipts/whatsapp?hub.mode=subscribe&hub.verify_token=\(Self.verifyToken)&hub.challenge=1158201444",
                                          auth: APIProcess.Auth.none)
            #expect(good.status == 200 && good.text == "1158201444", "\(good)")
            let bad = try await api.call(.GET, "/v1/receipts/whatsapp?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1", auth: APIProcess.Auth.none)
            #expect(bad.status == 401, "\(bad)")
            let body = #"{"object":"whatsapp_business_account","entry":[{"changes":[{"field":"messages","value":{"statuses":[{"id":"wamid.x","status":"failed"}]}}]}]}"#
            let forged = try await api.call(.POST, "/v1/receipts/whatsapp", body: body, auth: APIProcess.Auth.none,
                                            headers: [("X-Hub-Signature-256", "sha256=" + String(repeating: "0", count: 64))])
            #expect(forged.status == 401 && forged.error["code"] as? String == "bad_signature", "\(forged)")
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
            // Meta's signed statuses of messages Herald did not send (another sender on the same
            // number: no mark, or its own): taken (200) and dropped at once, no job to retry.
            stub.webhook("http://127.0.0.1:\(api.port)/v1/receipts/whatsapp")
            #expect(await stub.postStatus(.init("failed", errorCode: 131026), id: "wamid.other", to: "4915112345678", callbackData: nil) == 200)
            #expect(await stub.postStatus(.init("delivered"), id: "wamid.campaign", to: "4915112345678", callbackData: "campaign-7") == 200)
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)

            _ = try await sms.start()
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-wn", phoneNumber: harness.phone(3), channel: .whatsapp)
            let id = try await harness.enqueue(job)
            try await eventually("refused") { try await harness.ledger(id)?.0 == "rejected" }
            #expect(try await sms.verification(job.verificationID)?.reason == "channel_unavailable:whatsapp")
            await stub.close()
        }
    }

    /// Twilio Verify's `Channel=whatsapp`, where this herald-api has WhatsApp: the verification
    /// reads channel whatsapp and its code goes out through the stand-in.
    @Test func twilioVerifysWhatsAppChannel() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let stub = try await WhatsAppStubServer()
            let api = try await Self.api(harness, stub)
            _ = try await sms.start { Self.whatsapp(&$0, stub) }
            let form = "application/x-www-form-urlencoded"
            let service = try await api.call(.POST, "/v2/Services", body: "FriendlyName=WhatsApp", contentType: form)
            let serviceSid = try #require(service.json["sid"] as? String, "\(service)")
            let to = harness.phone(4)
            let started = try await api.call(.POST, "/v2/Services/\(serviceSid)/Verifications",
                                             body: "To=\(to.replacingOccurrences(of: "+", with: "%2B"))&Channel=whatsapp", contentType: form)
            #expect(started.status == 201 && started.json["channel"] as? String == "whatsapp", "\(started)")
            try await eventually("sent over WhatsApp") { stub.messages.contains { $0.to == String(to.dropFirst()) } }
            let code = try #require(stub.messages.first { $0.to == String(to.dropFirst()) }?.code)
            let check = try await api.call(.POST, "/v2/Services/\(serviceSid)/VerificationCheck",
                                           body: "To=\(to.replacingOccurrences(of: "+", with: "%2B"))&Code=\(code)", contentType: form)
            #expect(check.json["status"] as? String == "approved", "\(check)")
            await stub.close()
        }
    }
}
