import Foundation
@testable import HeraldAPI
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The receipt callbacks' signatures and decoders (herald-api), the `sms.receipt` job's rules
/// and the receipt settings (herald-sms), without servers.
@Suite struct ReceiptUnitTests {
    // MARK: Twilio

    /// Twilio's own example (its "Validating signatures" page), and one computed with Twilio's
    /// Python library (twilio 9, `RequestValidator("12345").compute_signature(url, params)`).
    @Test func twilioSignaturesMatchTwilios() throws {
        let example: [(String, String)] = [("CallSid", "CA1234567890ABCDE"), ("Caller", "+12349013030"), ("Digits", "1234"),
                                           ("From", "+12349013030"), ("To", "+18005551212")]
        let url = "https://mycompany.com/myapp.php?foo=1&bar=2"
        #expect(TwilioStatusCallback.signature(url: url, pairs: example, authToken: "12345") == "0/KCTR6DLpKmkAf8muzZqo1nDgQ=")
        // Order of the body does not matter: Twilio's signature sorts the names.
        #expect(TwilioStatusCallback.holds("0/KCTR6DLpKmkAf8muzZqo1nDgQ=", url: url, pairs: example.reversed(), authToken: "12345"))
        let callback = try TwilioStatusCallback.pairs("MessageStatus=delivered&AccountSid=AC1&MessageSid=SM1")
        #expect(TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com/v1/receipts/twilio", pairs: callback, authToken: "12345"))
        // Twilio signs the URL with or without its scheme's default port: both hold.
        #expect(TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com:443/v1/receipts/twilio", pairs: callback, authToken: "12345"))
        let withPort = TwilioStatusCallback.signature(url: "https://herald.example.com:443/v1/receipts/twilio", pairs: callback, authToken: "12345")
        #expect(TwilioStatusCallback.holds(withPort, url: "https://herald.example.com/v1/receipts/twilio", pairs: callback, authToken: "12345"))
        #expect(TwilioStatusCallback.urlForms("http://h.example:8080/x") == ["http://h.example:8080/x"])
        #expect(TwilioStatusCallback.urlForms("http://h.example/x?a=1") == ["http://h.example/x?a=1", "http://h.example:80/x?a=1"])
        // A name given twice counts each of its values once, sorted, as Twilio's validators do.
        let twice = TwilioStatusCallback.signature(url: "https://a.example/", pairs: [("A", "2"), ("A", "1"), ("A", "2")], authToken: "t")
        #expect(twice == TwilioStatusCallback.signature(url: "https://a.example/", pairs: [("A", "1"), ("A", "2")], authToken: "t"))
        // Anything else changed: another URL (another port, a query), a value, the token, no header.
        #expect(!TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com:8443/v1/receipts/twilio", pairs: callback, authToken: "12345"))
        #expect(!TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com/v1/receipts/twilio?x=1", pairs: callback, authToken: "12345"))
        let forged = try TwilioStatusCallback.pairs("MessageStatus=undelivered&AccountSid=AC1&MessageSid=SM1")
        #expect(!TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com/v1/receipts/twilio", pairs: forged, authToken: "12345"))
        #expect(!TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com/v1/receipts/twilio", pairs: callback, authToken: "54321"))
        #expect(!TwilioStatusCallback.holds(nil, url: "https://herald.example.com/v1/receipts/twilio", pairs: callback, authToken: "12345"))
        #expect(!TwilioStatusCallback.holds("LV3V0/R1vm/RdTx9t8dG+o1RLgI=", url: "https://herald.example.com/v1/receipts/twilio", pairs: callback, authToken: ""))
    }

    @Test(arguments: [
        ("queued", DeliveryStatus.queued), ("accepted", .queued), ("sending", .queued), ("scheduled", .queued), ("sent", .sent),
        ("delivered", .delivered), ("read", .delivered), ("undelivered", .undelivered), ("failed", .undelivered), ("canceled", .undelivered),
    ])
    func twilioStatusesMapToHeralds(twilio: String, status: DeliveryStatus) throws {
        let job = try #require(try TwilioStatusCallback.receipt([("MessageSid", "SMabc"), ("MessageStatus", twilio)]))
        #expect(job.status == status && job.provider == .twilio && job.providerMessageID == "SMabc" && job.providerStatus == twilio)
    }

    @Test func aTwilioCallbackNamesWhatIsWrong() throws {
        let failed = try TwilioStatusCallback.receipt([("MessageSid", "SMabc"), ("MessageStatus", "undelivered"), ("ErrorCode", "30003")])
        #expect(failed?.errorCode == "twilio-30003")
        // A status Herald does not keep is taken and ignored (an error would fill Twilio's debugger).
        #expect(try TwilioStatusCallback.receipt([("MessageSid", "SMabc"), ("MessageStatus", "received")]) == nil)
        #expect(try TwilioStatusCallback.receipt([("MessageSid", "SMabc"), ("MessageStatus", "partially_delivered")]) == nil)
        for (pairs, field) in [([("MessageStatus", "sent")], "MessageSid"), ([("MessageSid", "SMabc")], "MessageStatus"),
                               ([("MessageSid", "SMabc"), ("MessageStatus", "sent"), ("ErrorCode", "30003x")], "ErrorCode"),
                               ([("MessageSid", "SM a"), ("MessageStatus", "sent")], "provider_message_id")] {
            #expect { try TwilioStatusCallback.receipt(pairs) } throws: { error in
                guard case .invalid(let named?, _) = error as? APIFailure else { return false }
                return named == field
            }
        }
    }

    // MARK: Kannel

    @Test func kannelDLRsAreSignedByIDAndValidityAndMapTheirTypes() throws {
        let secret = String(repeating: "k", count: 32)
        let now = Date(timeIntervalSince1970: 1_795_806_119)
        let exp = 1_795_806_119 + 96 * 3600
        let signature = SMSConfiguration.Receipts.kannelSignature(id: "hk-1", expires: exp, secret: secret)
        #expect(SMSConfiguration.Receipts.kannelSignatureHolds(id: "hk-1", expires: exp, signature: signature, secret: secret))
        #expect(!SMSConfiguration.Receipts.kannelSignatureHolds(id: "hk-2", expires: exp, signature: signature, secret: secret))
        #expect(!SMSConfiguration.Receipts.kannelSignatureHolds(id: "hk-1", expires: exp + 1, signature: signature, secret: secret))
        #expect(!SMSConfiguration.Receipts.kannelSignatureHolds(id: "hk-1", expires: exp, signature: signature, secret: secret + "x"))
        #expect(!SMSConfiguration.Receipts.kannelSignatureHolds(id: "hk-1", expires: exp, signature: signature, secret: ""))
        #expect(!signature.contains("=") && !signature.contains("+") && !signature.contains("/"))

        var receipts = SMSConfiguration.Receipts()
        receipts.baseURL = "https://herald.example.com"
        receipts.kannelSecret = secret
        let url = receipts.kannelURL(id: "hk-1", now: now)
        #expect(url == "https://herald.example.com/v1/receipts/kannel?id=hk-1&exp=\(exp)&sig=\(signature)&type=%d&ts=%T&reply=%A")

        // As Kannel fills it in (its fake SMSC's "delivered", then an SMPP receipt's failure).
        func fields(_ rest: String, id: String = "hk-1") throws -> FormFields {
            try FormFields("id=\(id)&exp=\(exp)&sig=\(signature)&\(rest)", accepted: KannelDLR.accepted, ignored: [])
        }
        let delivered = try fields("type=1&ts=1795806119&reply=")
        let id = try KannelDLR.signedID(delivered, secret: secret, now: now)
        let job = try #require(try KannelDLR.receipt(delivered, id: id))
        #expect(job.status == .delivered && job.providerMessageID == "hk-1" && job.errorCode == nil && job.providerStatus == "1")
        #expect(job.occurredAt == "2026-11-27T19:01:59Z")
        let failed = try fields("type=2&reply=id%3A42+sub%3A001+dlvrd%3A000+stat%3AUNDELIV+err%3A0B1+text%3A")
        #expect(try KannelDLR.receipt(failed, id: "hk-1")?.errorCode == "smpp-err-0b1")
        #expect(KannelDLR.errorCode(type: 16, reply: "NACK/0x00000045/Unknown") == "kannel-16")
        #expect(KannelDLR.errorCode(type: 1, reply: "id:1 stat:DELIVRD err:000") == nil)
        // The type is read by its bits, the final ones first (0x22: undelivered, and expired).
        for (type, status) in [(2, DeliveryStatus.undelivered), (4, .queued), (8, .sent), (16, .undelivered), (9, .delivered), (0x22, .undelivered)] {
            #expect(try KannelDLR.receipt(fields("type=\(type)"), id: "hk-1")?.status == status)
        }
        #expect(try KannelDLR.receipt(fields("type=32"), id: "hk-1") == nil)
        #expect(try KannelDLR.receipt(fields("type=0"), id: "hk-1") == nil)
        for bad in ["type=256", "type=x", ""] {
            #expect(throws: APIFailure.invalid(field: "type", reason: "a DLR type: a number from 0 to 255")) { try KannelDLR.receipt(fields(bad), id: "hk-1") }
        }
        let unsigned = try FormFields("id=hk-1&type=1", accepted: KannelDLR.accepted, ignored: [])
        #expect(throws: APIFailure.forgedCallback) { try KannelDLR.signedID(unsigned, secret: secret, now: now) }
        #expect(throws: APIFailure.forgedCallback) { try KannelDLR.signedID(fields("type=1", id: "hk-2"), secret: secret, now: now) }
        // Past its validity, the URL no longer holds.
        #expect(throws: APIFailure.forgedCallback) { try KannelDLR.signedID(delivered, secret: secret, now: now.addingTimeInterval(97 * 3600)) }
    }

    // MARK: Standard Webhooks

    /// The specification's own test vector (standard-webhooks, "Test vectors").
    @Test func standardWebhooksSignaturesMatchTheSpecification() throws {
        let key = try #require(StandardWebhooks.key(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = StandardWebhooks.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, key: key)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let then = Date(timeIntervalSince1970: 1_614_265_330)
        try StandardWebhooks.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: signature, body: body, key: key, now: then)
        // Several signatures (a key being rotated): one that holds is enough.
        try StandardWebhooks.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: "v1,AAAA \(signature)", body: body, key: key, now: then)
        #expect(throws: StandardWebhooks.Refusal.forged) {
            try StandardWebhooks.verify(id: "msg_other", timestamp: "1614265330", signatures: signature, body: body, key: key, now: then)
        }
        #expect(throws: StandardWebhooks.Refusal.forged) {
            try StandardWebhooks.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: signature, body: body + [0x20], key: key, now: then)
        }
        #expect(throws: StandardWebhooks.Refusal.stale) {
            try StandardWebhooks.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "1614265330", signatures: signature, body: body, key: key,
                                        now: then.addingTimeInterval(301))
        }
        #expect(throws: StandardWebhooks.Refusal.unsigned) {
            try StandardWebhooks.verify(id: nil, timestamp: "1614265330", signatures: signature, body: body, key: key, now: then)
        }
        #expect(throws: StandardWebhooks.Refusal.unsigned) {
            try StandardWebhooks.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: "soon", signatures: signature, body: body, key: key, now: then)
        }
        #expect(StandardWebhooks.key(secret: "whsec_c2hvcnQ=") == nil)
    }

    @Test func webhookReceiptsAreReadStrictly() throws {
        let job = try WebhookReceipt.receipt(Array(#"{"type":"sms.status","data":{"message_id":"m-1","status":"undelivered","error_code":"absent subscriber","occurred_at":"2026-11-27T19:02:03.5+01:00"}}"#.utf8))
        #expect(job.provider == .webhook && job.providerMessageID == "m-1" && job.status == .undelivered && job.errorCode == "absent subscriber")
        #expect(job.occurredAt == "2026-11-27T18:02:03Z")
        for (body, field) in [(#"{"type":"sms.sent","data":{"message_id":"m","status":"sent"}}"#, "type"),
                              (#"{"type":"sms.status"}"#, "data"),
                              (#"{"type":"sms.status","data":{"message_id":"m","status":"read"}}"#, "data.status"),
                              (#"{"type":"sms.status","data":{"status":"sent"}}"#, "data.message_id"),
                              (#"{"type":"sms.status","data":{"message_id":"m","status":"sent","extra":1}}"#, "data.extra"),
                              (#"{"type":"sms.status","data":{"message_id":"m","status":"sent","occurred_at":"today"}}"#, "data.occurred_at")] {
            #expect { try WebhookReceipt.receipt(Array(body.utf8)) } throws: { error in
                guard case .invalid(let named?, _) = error as? APIFailure else { return false }
                return named == field
            }
        }
    }

    // MARK: The job and the settings

    @Test func aReceiptJobIsOneMessagePerProviderMessageAndStatus() throws {
        let a = SMSReceiptJob(provider: .twilio, providerMessageID: "SM1", status: .delivered, receivedAt: Date(timeIntervalSince1970: 1))
        let again = SMSReceiptJob(provider: .twilio, providerMessageID: "SM1", status: .delivered, receivedAt: Date(timeIntervalSince1970: 2))
        #expect(a.messageID == again.messageID)
        #expect(a.messageID != SMSReceiptJob(provider: .twilio, providerMessageID: "SM1", status: .sent).messageID)
        #expect(a.messageID != SMSReceiptJob(provider: .kannel, providerMessageID: "SM1", status: .delivered).messageID)
        try a.validate()
        var bad = a
        bad.receivedAt = "yesterday"
        #expect(throws: JobValidationError("received_at must be an RFC 3339 time")) { try bad.validate() }
        bad = a
        bad.errorCode = "é"
        #expect(throws: JobValidationError("error_code must be 1 to 64 printable ASCII characters")) { try bad.validate() }
        // Decoded as the family's member by its type.
        let body = try JSONEncoder().encode(a)
        let decoded = try JSONDecoder().decode(SMSReceiptJob.self, from: body)
        #expect(decoded == a && decoded.statusTime == Date(timeIntervalSince1970: 1))
        #expect(SMSJob.wrap(a) == .receipt(a))
    }

    @Test func receiptSettingsAreCheckedAtStart() throws {
        func read(_ values: [String: Any]) throws -> SMSConfiguration {
            try SMSConfiguration(source: ConfigSource(values: values, environment: [:]))
        }
        #expect(try read([:]).receipts.enabled == false)
        let on = try read(["sms.receipts.base_url": "https://herald.example.com", "sms.providers": ["kannel"],
                           "sms.receipts.kannel_secret": String(repeating: "s", count: 32)])
        #expect(on.receipts.twilioURL == "https://herald.example.com/v1/receipts/twilio")
        for (values, key) in [
            (["sms.receipts.base_url": "https://herald.example.com/"], "sms.receipts.base_url"),
            (["sms.receipts.base_url": "https://user:pw@herald.example.com"], "sms.receipts.base_url"),
            (["sms.receipts.base_url": "https://herald.example.com#x"], "sms.receipts.base_url"),
            (["sms.receipts.kannel_allowed_sources": ["10.0.0.0/33"]], "sms.receipts.kannel_allowed_sources"),
            (["sms.receipts.max_age_hours": 0], "sms.receipts.max_age_hours"),
            (["sms.receipts.base_url": "ftp://herald.example.com"], "sms.receipts.base_url"),
            (["sms.receipts.base_url": "http://herald.example.com"], "sms.receipts.base_url"),
            (["sms.receipts.base_url": "https://herald.example.com", "sms.providers": ["kannel"]], "sms.receipts.kannel_secret"),
            (["sms.receipts.kannel_secret": "short"], "sms.receipts.kannel_secret"),
            (["sms.receipts.kannel_dlr_mask": 32], "sms.receipts.kannel_dlr_mask"),
        ] as [([String: Any], String)] {
            #expect { try read(values) } throws: { ($0 as? ConfigError)?.key == key }
        }
    }
}

/// WhatsApp's webhook signature and statuses (herald-api), without servers.
@Suite struct WhatsAppWebhookUnitTests {
    @Test func aSignatureIsTheBodysHMACUnderTheAppSecret() throws {
        let body = Array(#"{"object":"whatsapp_business_account","entry":[]}"#.utf8)
        let signature = WhatsAppWebhook.signature(body: body, appSecret: "s3cret")
        #expect(signature.hasPrefix("sha256=") && signature.count == 71)
        #expect(WhatsAppWebhook.holds(signature, body: body, appSecret: "s3cret"))
        #expect(!WhatsAppWebhook.holds(signature, body: body + [0x20], appSecret: "s3cret"))
        #expect(!WhatsAppWebhook.holds(signature, body: body, appSecret: "other"))
        #expect(!WhatsAppWebhook.holds(String(signature.dropLast()), body: body, appSecret: "s3cret"))
        #expect(!WhatsAppWebhook.holds(signature.replacingOccurrences(of: "sha256=", with: "sha1="), body: body, appSecret: "s3cret"))
        #expect(!WhatsAppWebhook.holds(nil, body: body, appSecret: "s3cret"))
        #expect(!WhatsAppWebhook.holds(signature, body: body, appSecret: ""))
    }

    @Test func eachKeptStatusIsAReceipt() throws {
        let body = Array(#"""
            {"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{
             "messaging_product":"whatsapp","metadata":{"phone_number_id":"1098"},"statuses":[
              {"id":"wamid.A","status":"sent","timestamp":"1795806119","recipient_id":"4915112345678","biz_opaque_callback_data":"herald:m-1"},
              {"id":"wamid.A","status":"read","timestamp":"1795806125","biz_opaque_callback_data":"herald:m-1"},
              {"status":"delivered","biz_opaque_callback_data":"herald:m-2"},
              {"id":"wamid.B","status":"failed","timestamp":"1795806130","errors":[{"code":131026,"title":"Message undeliverable"}],"biz_opaque_callback_data":"herald:m-3"},
              {"id":"wamid.C","status":"deleted","biz_opaque_callback_data":"herald:m-4"},
              {"id":"wamid.D","status":"delivered","timestamp":"1795806131"},
              {"id":"wamid.E","status":"failed","timestamp":"1795806132","biz_opaque_callback_data":"campaign-7"}],
             "messages":[{"from":"4915112345678","id":"wamid.in","type":"text"}]}},
             {"field":"messages","value":{"metadata":{"phone_number_id":"other"},"statuses":[{"id":"wamid.X","status":"delivered"}]}}]}]}
            """#.utf8)
        // Another business number's statuses, a status without an id and the statuses of messages
        // Herald did not send (no mark, another sender's) are skipped, not the batch.
        let jobs = try WhatsAppWebhook.receipts(body, phoneNumberID: "1098")
        #expect(jobs.map(\.providerMessageID) == ["wamid.A", "wamid.A", "wamid.B"])
        #expect(jobs.map(\.status) == [.sent, .delivered, .undelivered])
        #expect(jobs.allSatisfy { $0.provider == .whatsapp })
        #expect(jobs[2].errorCode == "whatsapp-131026" && jobs[0].errorCode == nil && jobs[1].providerStatus == "read")
        #expect(jobs[0].occurredAt == "2026-11-27T19:01:59Z")
        #expect(try WhatsAppWebhook.receipts(Array(#"{"object":"whatsapp_business_account","entry":[]}"#.utf8), phoneNumberID: "1098").isEmpty)
        #expect(throws: APIFailure.self) { try WhatsAppWebhook.receipts(Array(#"{"object":"page","entry":[]}"#.utf8), phoneNumberID: "1098") }
        #expect(throws: APIFailure.self) { try WhatsAppWebhook.receipts(Array("[]".utf8), phoneNumberID: "1098") }
    }

    @Test func theTemplateCarriesTheCodeInItsBodyAndButton() throws {
        let payload = WhatsAppProvider.payload(to: "+4915112345678", code: "123456", template: "herald_code", language: "de", messageID: "m-9")
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(payload)) as? [String: Any])
        #expect(json["biz_opaque_callback_data"] as? String == "herald:m-9" && WhatsAppCallbackData.sentByHerald("herald:m-9"))
        #expect(json["to"] as? String == "4915112345678" && json["messaging_product"] as? String == "whatsapp" && json["type"] as? String == "template")
        let template = try #require(json["template"] as? [String: Any])
        #expect(template["name"] as? String == "herald_code" && (template["language"] as? [String: Any])?["code"] as? String == "de")
        let components = try #require(template["components"] as? [[String: Any]])
        #expect(components.count == 2 && components[0]["type"] as? String == "body" && components[1]["sub_type"] as? String == "url" && components[1]["index"] as? String == "0")
        for component in components { #expect((component["parameters"] as? [[String: Any]])?.first?["text"] as? String == "123456") }
        var settings = SMSConfiguration.WhatsApp()
        settings.languages = ["default": "en_US", "pt-br": "pt_BR", "de": "de"]
        #expect(settings.language(for: "pt-BR") == "pt_BR" && settings.language(for: "de-AT") == "de" && settings.language(for: "fr") == "en_US")
        #expect { try SMSConfiguration(source: ConfigSource(values: ["sms.whatsapp.phone_number_id": "1"])) } throws: {
            ($0 as? ConfigError)?.key == "sms.whatsapp.access_token"
        }
        #expect { try SMSConfiguration(source: ConfigSource(values: ["sms.whatsapp.languages.de": "German"])) } throws: {
            ($0 as? ConfigError)?.key == "sms.whatsapp.languages.de"
        }
    }
}
