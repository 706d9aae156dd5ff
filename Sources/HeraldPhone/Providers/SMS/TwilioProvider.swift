import AsyncHTTPClient
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import NIOCore

/// Twilio's Messages API: `POST {base}/2010-04-01/Accounts/{sid}/Messages.json`, a form
/// body (`To`, `From` or `MessagingServiceSid`, `Body`), HTTP basic auth with the account
/// SID and auth token. 201 carries the message `sid`; errors carry Twilio's numeric `code`
/// (21211 invalid number, 21610 unsubscribed, 21408 region not enabled, …), recorded as
/// `twilio-<code>`. With `sms.receipts.base_url` set, each message names Herald's receipt
/// endpoint as its `StatusCallback`: Twilio posts every change of the message's status there.
struct TwilioProvider: DeliveryProvider {
    let configuration: SMSConfiguration.Twilio
    let http: ProviderHTTP
    /// `StatusCallback`, or nil for none.
    var statusCallback: String?
    var name: String { "twilio" }

    /// A form POST to the account's `resource` (`Messages.json`, `Calls.json`), HTTP Basic with its
    /// SID and auth token, JSON asked for back.
    static func request(_ configuration: SMSConfiguration.Twilio, resource: String) -> HTTPClientRequest {
        let base = configuration.baseURL.hasSuffix("/") ? String(configuration.baseURL.dropLast()) : configuration.baseURL
        var request = HTTPClientRequest(url: "\(base)/2010-04-01/Accounts/\(PercentEncoding.form.encode(configuration.accountSID))/\(resource)")
        request.method = .POST
        request.headers.add(name: "Authorization", value: ProviderHTTP.basicAuthorization(user: configuration.accountSID, password: configuration.authToken))
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        return request
    }

    func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        var request = Self.request(configuration, resource: "Messages.json")
        var fields = [("To", message.to), ("Body", message.text.revealed)]
        if let sender = message.registration?.sender {
            // The region's registered header (its DLT ids are registered with Twilio, not sent).
            fields.append(("From", sender))
        } else if configuration.messagingServiceSID.isEmpty {
            fields.append(("From", configuration.from))
        } else {
            fields.append(("MessagingServiceSid", configuration.messagingServiceSID))
        }
        if let statusCallback { fields.append(("StatusCallback", statusCallback)) }
        request.body = .bytes(ByteBuffer(string: ProviderHTTP.formEncode(fields)))

        return await http.send(request, logger: context.logger) { status, body in
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any]
            if let failure = ProviderHTTP.classify(status: status, code: (json?["code"] as? Int).map { "twilio-\($0)" }) {
                return ProviderAnswer(failure, httpStatus: status)
            }
            // Twilio answers 201 with status queued/accepted; "failed"/"undelivered" at once is a refusal.
            if let state = json?["status"] as? String, state == "failed" || state == "undelivered" {
                let code = (json?["error_code"] as? Int).map { "twilio-\($0)" } ?? "twilio-\(state)"
                return .refused(code, httpStatus: status)
            }
            return .accepted(json?["sid"] as? String, httpStatus: status)
        }
    }
}
