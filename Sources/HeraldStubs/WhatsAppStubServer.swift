import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// WhatsApp Business Cloud API on loopback (Meta cannot be reached from here), as strict as its
/// reference about what Herald sends, and the status webhooks Meta posts afterwards.
///
/// `POST /{version}/{phone_number_id}/messages` with `Authorization: Bearer <token>` (else 401,
/// Graph error 190) and a JSON body: `messaging_product` `whatsapp`, `to` of 7 to 15 digits,
/// `type` `template`, the template's name (else 404-like Graph error 132001), a language code,
/// and exactly two components, `body` with one text parameter and `button` (`sub_type` `url`,
/// `index` `"0"`) with one text parameter, the same code (else 400, 132000); an optional
/// `biz_opaque_callback_data` string of at most 512 characters (else 400, 100), echoed in each of
/// the message's statuses as Meta does. 200 with
/// `messages[0].id` a `wamid.…`. Then each step of ``script`` is posted to the app's callback URL
/// (`webhookURL`) as Meta does: `{"object":"whatsapp_business_account","entry":[{"changes":[{"field":
/// "messages","value":{"statuses":[…]}}]}]}`, signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`
/// under the app secret.
public final class WhatsAppStubServer: Sendable {
    public struct Step: Sendable {
        public var status: String
        public var errorCode: Int?
        public var after: Duration
        public init(_ status: String, errorCode: Int? = nil, after: Duration = .milliseconds(50)) {
            self.status = status
            self.errorCode = errorCode
            self.after = after
        }
    }

    /// A message Meta accepted: its `wamid`, number, template language and code.
    public struct Message: Sendable {
        public var id: String
        public var to: String
        public var language: String
        public var code: String
    }

    public let accessToken: String
    public let phoneNumberID: String
    public let template: String
    public let appSecret: String
    private let server: StubHTTPServer
    private let state = NIOLockedValueBox(State())

    private struct State {
        var script: [Step] = [Step("sent"), Step("delivered")]
        var webhookURL: String?
        var messages: [Message] = []
        var posted: [(String, Int)] = []
        var down = false
        var throttled = 0
        var hanging = 0
        var refusing = 0
        var refusalDelay: Duration = .zero
        var refused = 0
    }

    public init(accessToken: String = "wa-stub-token", phoneNumberID: String = "109876543210", template: String = "herald_code",
                appSecret: String = "wa-stub-app-secret") async throws {
        (self.accessToken, self.phoneNumberID, self.template, self.appSecret) = (accessToken, phoneNumberID, template, appSecret)
        let state = self.state
        server = try await StubHTTPServer { request in
            Self.answer(request, token: accessToken, phoneNumberID: phoneNumberID, template: template, appSecret: appSecret, state: state)
        }
    }

    /// `sms.whatsapp.base_url` for this server.
    public var baseURL: String { server.baseURL + "/v21.0" }
    public var messages: [Message] { state.withLockedValue { $0.messages } }
    /// The statuses posted, with herald-api's answer (0: none).
    public var posted: [(status: String, answer: Int)] { state.withLockedValue { $0.posted } }
    /// The app's callback URL (herald-api's `/v1/receipts/whatsapp`); nil: no webhooks.
    public func webhook(_ url: String?) { state.withLockedValue { $0.webhookURL = url } }
    public func script(_ steps: [Step]) { state.withLockedValue { $0.script = steps } }
    /// Posts one status of message `id` to the callback URL, signed, as Meta posts a status of a
    /// message someone else sent on the same business number (`callbackData`: that send's
    /// `biz_opaque_callback_data`, nil for none). herald-api's answer (0: none).
    public func postStatus(_ step: Step, id: String, to: String, callbackData: String?) async -> Int {
        guard let url = state.withLockedValue({ $0.webhookURL }) else { return 0 }
        return await Self.post(step, id: id, to: to, callbackData: callbackData, phoneNumberID: phoneNumberID, url: url, appSecret: appSecret)
    }
    /// Answers 503 (Graph error 131000) while down.
    public func down(_ down: Bool) { state.withLockedValue { $0.down = down } }
    /// The next `count` sends are taken (the message recorded: Meta may have sent it) and never
    /// answered, as when a connection drops after the request was written.
    public func hang(_ count: Int) { state.withLockedValue { $0.hanging = count } }
    /// The next `count` sends are answered as Meta throttles: 400 with Graph error 130429.
    public func throttle(_ count: Int) { state.withLockedValue { $0.throttled = count } }
    /// The next `count` well-formed sends are refused for good, `after` they arrive: 400 with Graph
    /// error 131030 (the number is not one the business may message), nothing sent.
    public func refuse(_ count: Int, after: Duration) {
        state.withLockedValue {
            $0.refusing = count
            $0.refusalDelay = after
        }
    }
    /// The sends refused so far, counted when they arrive (their answers may not have left yet).
    public var refused: Int { state.withLockedValue { $0.refused } }
    public func close() async { await server.close() }

    private static func answer(_ request: StubHTTPServer.Request, token: String, phoneNumberID: String, template: String, appSecret: String,
                               state: NIOLockedValueBox<State>) -> StubHTTPServer.Response {
        guard request.method == "POST", request.path == "/v21.0/\(phoneNumberID)/messages" else {
            return error(400, 100, "Unsupported post request. Object with ID does not exist")
        }
        guard request.header("Authorization") == "Bearer \(token)" else { return error(401, 190, "Invalid OAuth access token.") }
        if state.withLockedValue({ $0.down }) { return error(503, 131000, "Something went wrong") }
        let throttled = state.withLockedValue { state in
            guard state.throttled > 0 else { return false }
            state.throttled -= 1
            return true
        }
        if throttled { return error(400, 130429, "Rate limit hit") }
        guard let body = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
              body["messaging_product"] as? String == "whatsapp", body["type"] as? String == "template",
              let to = body["to"] as? String, to.range(of: #"^[0-9]{7,15}$"#, options: .regularExpression) != nil,
              let tmpl = body["template"] as? [String: Any], let language = (tmpl["language"] as? [String: Any])?["code"] as? String,
              let components = tmpl["components"] as? [[String: Any]]
        else { return error(400, 131008, "Required parameter is missing") }
        let callbackData = body["biz_opaque_callback_data"]
        guard callbackData == nil || (callbackData as? String).map({ $0.count <= 512 }) == true else {
            return error(400, 100, "Invalid parameter")
        }
        guard tmpl["name"] as? String == template else { return error(404, 132001, "Template name does not exist in the translation") }
        func parameter(_ component: [String: Any]) -> String? {
            guard let parameters = component["parameters"] as? [[String: Any]], parameters.count == 1,
                  parameters[0]["type"] as? String == "text" else { return nil }
            return parameters[0]["text"] as? String
        }
        guard components.count == 2, components[0]["type"] as? String == "body",
              components[1]["type"] as? String == "button", components[1]["sub_type"] as? String == "url", components[1]["index"] as? String == "0",
              let code = parameter(components[0]), parameter(components[1]) == code, code.range(of: #"^[0-9]{4,15}$"#, options: .regularExpression) != nil
        else { return error(400, 132000, "Number of parameters does not match the expected number of params") }
        let refusal: Duration? = state.withLockedValue { state in
            guard state.refusing > 0 else { return nil }
            state.refusing -= 1
            state.refused += 1
            return state.refusalDelay
        }
        if let refusal {
            var answer = error(400, 131030, "Recipient phone number not in allowed list")
            answer.delay = refusal
            return answer
        }
        let id = "wamid." + Data((0..<24).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let (script, url, hangs) = state.withLockedValue { state in
            state.messages.append(Message(id: id, to: to, language: language, code: code))
            let hangs = state.hanging > 0
            if hangs { state.hanging -= 1 }
            return (state.script, state.webhookURL, hangs)
        }
        if hangs { return .init(status: 200, hang: true) }
        if let url, !script.isEmpty {
            Task {
                for step in script {
                    try? await Task.sleep(for: step.after)
                    let answer = await post(step, id: id, to: to, callbackData: callbackData as? String, phoneNumberID: phoneNumberID, url: url,
                                            appSecret: appSecret)
                    state.withLockedValue { $0.posted.append((step.status, answer)) }
                }
            }
        }
        return .init(status: 200, body: #"{"messaging_product":"whatsapp","contacts":[{"input":"\#(to)","wa_id":"\#(to)"}],"messages":[{"id":"\#(id)"}]}"#)
    }

    private static func error(_ status: Int, _ code: Int, _ message: String) -> StubHTTPServer.Response {
        .init(status: status, body: #"{"error":{"message":"\#(message)","type":"OAuthException","code":\#(code),"fbtrace_id":"AbCdEf"}}"#)
    }

    /// One status as Meta posts it, signed.
    static func post(_ step: Step, id: String, to: String, callbackData: String?, phoneNumberID: String, url: String, appSecret: String) async -> Int {
        var status: [String: Any] = ["id": id, "status": step.status, "timestamp": String(Int(Date().timeIntervalSince1970)), "recipient_id": to]
        if let callbackData { status["biz_opaque_callback_data"] = callbackData }
        if let code = step.errorCode { status["errors"] = [["code": code, "title": "Message undeliverable"]] }
        let notification: [String: Any] = ["object": "whatsapp_business_account", "entry": [[
            "id": "102290129340398", "changes": [["field": "messages", "value": [
                "messaging_product": "whatsapp", "metadata": ["display_phone_number": "15550783881", "phone_number_id": phoneNumberID],
                "statuses": [status]]]]]]]
        guard let body = try? JSONSerialization.data(withJSONObject: notification) else { return 0 }
        let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Array(appSecret.utf8)))
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Hub-Signature-256", value: "sha256=" + mac.map { String(format: "%02x", $0) }.joined())
        request.body = .bytes(ByteBuffer(bytes: body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)) else { return 0 }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }
}
