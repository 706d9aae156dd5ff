import AsyncHTTPClient
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import NIOCore

/// Kannel's smsbox HTTP interface: `GET /cgi-bin/sendsms?username&password&to&text&from`,
/// with `charset=UTF-8` and `coding=2` (UCS-2) when the text is not GSM-7. Kannel answers
/// 202 `0: Accepted for delivery` or `3: Queued for later delivery`, with no message id; 4xx
/// (bad number, missing field) is final, 403 (credentials) and 5xx go to the next provider.
/// With receipts on (`sms.receipts.*`), Herald names the message itself (`hk-…`, recorded as its
/// provider message id) and gives Kannel a signed `dlr-url` carrying that name and a `dlr-mask`.
struct KannelProvider: DeliveryProvider {
    let configuration: SMSConfiguration.Kannel
    let http: ProviderHTTP
    /// Where Kannel reports, or nil for no receipts.
    var receipts: SMSConfiguration.Receipts?
    var name: String { "kannel" }

    func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        var fields = [
            ("username", configuration.username), ("password", configuration.password),
            ("to", message.to), ("text", message.text.revealed), ("charset", "UTF-8"),
            ("coding", message.encoding.scheme == .gsm7 ? "0" : "2"),
        ]
        if let sender = message.registration?.sender {
            fields.append(("from", sender))
        } else if !configuration.from.isEmpty {
            fields.append(("from", configuration.from))
        }
        if let registration = message.registration, registration.entityID != nil || registration.templateID != nil {
            // SMPP TLVs through Kannel's meta-data (its smpp-tlv groups map PE_ID and TEMPLATE_ID
            // to the operator's tags): how India's DLT ids reach an SMSC.
            let tlvs = [("PE_ID", registration.entityID), ("TEMPLATE_ID", registration.templateID)].compactMap { name, value in value.map { (name, $0) } }
            fields.append(("meta-data", "?smpp?" + ProviderHTTP.formEncode(tlvs)))
        }
        var messageID: String?
        if let receipts {
            let id = "hk-" + RandomID.hex()
            fields.append(("dlr-mask", String(receipts.kannelDLRMask)))
            fields.append(("dlr-url", receipts.kannelURL(id: id)))
            messageID = id
        }
        let separator = configuration.url.contains("?") ? "&" : "?"
        var request = HTTPClientRequest(url: configuration.url + separator + ProviderHTTP.formEncode(fields))
        request.method = .GET

        return await http.send(request, logger: context.logger) { status, body in
            let text = String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)
            // "0: Accepted for delivery", "3: Queued for later delivery", else an error text.
            let kannelCode = text.prefix(while: \.isNumber)
            if let failure = ProviderHTTP.classify(status: status, code: kannelCode.isEmpty ? nil : "kannel-\(kannelCode)") {
                return ProviderAnswer(failure, httpStatus: status)
            }
            guard kannelCode == "0" || kannelCode == "3" else {
                return .next("kannel-unexpected-answer", httpStatus: status)
            }
            return .accepted(messageID, httpStatus: status)
        }
    }
}
