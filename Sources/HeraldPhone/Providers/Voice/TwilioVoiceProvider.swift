import AsyncHTTPClient
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import NIOCore

/// Twilio's Calls API: `POST {base}/2010-04-01/Accounts/{sid}/Calls.json` with `To`, `From`
/// (`sms.voice.from`), the `Twiml` the call plays (the code read slowly, twice, in the
/// verification's language: ``twiml(text:language:voice:)``), `Timeout` (`sms.voice.ring_seconds`)
/// and, with receipts on, `StatusCallback` with the events `initiated`, `ringing`, `answered`,
/// `completed`. The TwiML travels in the request, never at a URL Twilio would fetch: the code is
/// nowhere to be read but in the call. 201 carries the call's `sid` (`CA…`, recorded as the
/// attempt's provider message id); errors carry Twilio's `code` (`twilio-21215`: the region is
/// not enabled for calls), judged as the Messages API's are.
struct TwilioVoiceProvider: DeliveryProvider {
    let twilio: SMSConfiguration.Twilio
    let voice: SMSConfiguration.Voice
    let http: ProviderHTTP
    /// `StatusCallback`, or nil for none.
    var statusCallback: String?
    var name: String { "twilio_voice" }

    /// What the call says: a pause for the phone to reach the ear, the text, a pause, the text again.
    static func twiml(text: String, language: String, voice: String) -> String {
        let say = "<Say language=\"\(xml(language))\"\(voice.isEmpty ? "" : " voice=\"\(xml(voice))\"")>\(xml(text))</Say>"
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Pause length=\"1\"/>\(say)<Pause length=\"2\"/>\(say)</Response>"
    }

    /// The code as the call says it: one digit at a time, a comma (a pause) between them.
    static func spoken(_ code: Secret) -> Secret {
        Secret(code.revealed.map(String.init).joined(separator: ", "))
    }

    private static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }

    func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        var request = TwilioProvider.request(twilio, resource: "Calls.json")
        var fields = [("To", message.to), ("From", voice.from),
                      ("Twiml", Self.twiml(text: message.text.revealed, language: voice.language(for: message.locale), voice: voice.voice)),
                      ("Timeout", String(voice.ringSeconds))]
        if let statusCallback {
            fields.append(("StatusCallback", statusCallback))
            fields.append(("StatusCallbackMethod", "POST"))
            fields += ["initiated", "ringing", "answered", "completed"].map { ("StatusCallbackEvent", $0) }
        }
        request.body = .bytes(ByteBuffer(string: ProviderHTTP.formEncode(fields)))

        return await http.send(request, logger: context.logger) { status, body in
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
            if let failure = ProviderHTTP.classify(status: status, code: (json?["code"] as? Int).map { "twilio-\($0)" }) {
                return ProviderAnswer(failure, httpStatus: status)
            }
            guard let sid = json?["sid"] as? String else { return .next("twilio-no-call-sid", httpStatus: status) }
            return .accepted(sid, httpStatus: status)
        }
    }
}
