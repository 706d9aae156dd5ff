import Foundation
@testable import HeraldAPI
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The voice channel's TwiML and call statuses, and the configuration of voice and fallback:
/// each bad value stops the worker naming its key.
@Suite struct FallbackUnitTests {
    @Test func theTwiMLSaysTheTextTwiceEscapedAndTheCodeADigitAtATime() {
        #expect(TwilioVoiceProvider.spoken(Secret("40912")).revealed == "4, 0, 9, 1, 2")
        let twiml = TwilioVoiceProvider.twiml(text: "Code <&> \"x\": 1, 2", language: "de-DE", voice: "Polly.Marlene")
        let say = #"<Say language="de-DE" voice="Polly.Marlene">Code &lt;&amp;&gt; &quot;x&quot;: 1, 2</Say>"#
        #expect(twiml == #"<?xml version="1.0" encoding="UTF-8"?><Response><Pause length="1"/>"# + say + #"<Pause length="2"/>"# + say + "</Response>")
        #expect(!TwilioVoiceProvider.twiml(text: "a", language: "en-US", voice: "").contains("voice="))
    }

    @Test func callStatusesAreDeliveryStatuses() throws {
        #expect(TwilioStatusCallback.callStatus("ringing") == .sent && TwilioStatusCallback.callStatus("in-progress") == .delivered)
        #expect(TwilioStatusCallback.callStatus("no-answer") == .undelivered && TwilioStatusCallback.callStatus("answered") == nil)
        let busy = try #require(try TwilioStatusCallback.receipt([("CallSid", "CA0123"), ("CallStatus", "busy"), ("SipResponseCode", "486")]))
        #expect(busy.provider == .twilioVoice && busy.status == .undelivered && busy.errorCode == "twilio-call-busy-sip-486")
        #expect(throws: (any Error).self) { try TwilioStatusCallback.receipt([("CallSid", "CA0123"), ("CallStatus", "failed"), ("SipResponseCode", "5xx")]) }
        #expect(throws: (any Error).self) { try TwilioStatusCallback.receipt([("CallSid", "CA0123")]) }
    }

    @Test func voiceAndFallbackSettingsAreReadAndCheckedAtStart() throws {
        let sms = try SMSConfiguration(source: ConfigSource(values: [
            "sms.twilio.account_sid": "AC1", "sms.twilio.auth_token": "t", "sms.voice.from": "+15005550006",
            "sms.fallback.channels": ["sms", "voice"], "sms.fallback.regions.IN": ["voice", "sms"], "sms.fallback.after_seconds.sms": 45,
        ]))
        #expect(sms.voice.enabled && sms.voice.configuredProviders == [.twilio])
        #expect(sms.fallback.channels(region: "IN") == [.voice, .sms] && sms.fallback.channels(region: "DE") == [.sms, .voice])
        #expect(sms.fallback.wait(.sms) == 45 && sms.fallback.wait(.voice) == nil && sms.fallback.waits == [45, 60])
        #expect(sms.voice.language(for: "pt-BR") == "pt-BR" && sms.voice.language(for: "de-AT") == "de-DE" && sms.voice.language(for: "ja") == "en-US")
        let refused: [([String: Any], String)] = [
            (["sms.fallback.channels": ["sms", "voice"]], "sms.fallback.channels"),
            (["sms.fallback.channels": ["sms", "sms"]], "sms.fallback.channels"),
            (["sms.fallback.channels": ["sms", "fax"]], "sms.fallback.channels[1]"),
            (["sms.fallback.regions.in": ["sms"]], "sms.fallback.regions.in"),
            (["sms.fallback.after_seconds.whatsapp": 4000], "sms.fallback.after_seconds.whatsapp"),
            (["sms.voice.from": "+15005550006"], "sms.voice.from"),
            (["sms.voice.from": "5550006", "sms.twilio.account_sid": "AC1", "sms.twilio.auth_token": "t"], "sms.voice.from"),
            (["sms.voice.providers": ["webhook"], "sms.voice.webhook_url": "https://calls.example.com/hook"], "sms.webhook.secret"),
            (["sms.voice.providers": ["sip"]], "sms.voice.providers[0]"),
            (["sms.voice.webhook_url": "calls.example.com"], "sms.voice.webhook_url"),
            (["sms.voice.ring_seconds": 2], "sms.voice.ring_seconds"),
            (["sms.voice.languages.de": "German"], "sms.voice.languages.de"),
        ]
        for (values, key) in refused {
            #expect { try SMSConfiguration(source: ConfigSource(values: values)) } throws: { ($0 as? ConfigError)?.key == key }
        }
    }

    @Test func aFallbackJobNamesItsStepAndNumber() {
        #expect(throws: Never.self) { try SMSFallbackJob(verificationID: "v-1", step: 1, reason: .timeout, phoneNumber: "+4915112345678").validate() }
        #expect(throws: JobValidationError.self) { try SMSFallbackJob(verificationID: "v-1", step: 0, reason: .timeout, phoneNumber: "+4915112345678").validate() }
        #expect(throws: JobValidationError.self) { try SMSFallbackJob(verificationID: "v-1", step: 1, reason: .undelivered, phoneNumber: "0151").validate() }
        #expect(throws: JobValidationError.self) {
            try SMSFallbackJob(verificationID: "v-1", step: 1, reason: .timeout, phoneNumber: "+4915112345678", clientIP: "203.0.113.7:80").validate()
        }
        #expect(throws: Never.self) {
            try SMSFallbackJob(verificationID: "v-1", step: 1, reason: .timeout, phoneNumber: "+4915112345678", clientIP: "2001:db8::1").validate()
        }
        #expect(throws: JobValidationError.self) {
            try SMSVerificationJob(verificationID: "v-1", phoneNumber: "+4915112345678", channel: .sms, channels: [.sms, .voice]).validate()
        }
        #expect(throws: JobValidationError.self) { try SMSVerificationJob(verificationID: "v-1", phoneNumber: "+4915112345678", channels: [.sms, .sms]).validate() }
    }
}
