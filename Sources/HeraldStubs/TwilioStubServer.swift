import AsyncHTTPClient
import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Twilio's Messages API on loopback, as strict as Twilio about what Herald sends, and the
/// message status callbacks Twilio posts afterwards (Twilio cannot be reached from here).
///
/// `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic with the account SID and
/// auth token (else 401, code 20003), a form body: `To` in E.164 (21211), `From` or
/// `MessagingServiceSid` (21603), `Body` of 1 to 1,600 characters (21602, 21617),
/// `StatusCallback` an http(s) URL of at most 1,000 characters (21609). 201 with the message
/// (`sid` `SM…`, `status` queued). Then, when the message named a `StatusCallback`, each step of
/// ``script`` is posted there in order, signed as Twilio signs (`X-Twilio-Signature`: base64
/// HMAC-SHA1 under the auth token of the URL and the sorted parameters), with `AccountSid`,
/// `ApiVersion`, `From`, `To`, `MessageSid`, `SmsSid`, `MessageStatus`, `SmsStatus`, and
/// `ErrorCode` on a failed step.
public final class TwilioStubServer: Sendable {
    /// One status callback: the status, its error code, and the wait before it.
    public struct Step: Sendable {
        public var status: String
        public var errorCode: String?
        public var after: Duration
        public init(_ status: String, errorCode: String? = nil, after: Duration = .milliseconds(50)) {
            self.status = status
            self.errorCode = errorCode
            self.after = after
        }
    }

    /// A message Twilio accepted.
    public struct Message: Sendable {
        public var sid: String
        public var to: String
        public var body: String
        public var statusCallback: String?
    }

    /// A callback posted, and herald-api's answer (0: no answer).
    public struct Posted: Sendable {
        public var sid: String
        public var status: String
        public var answer: Int
    }

    public let accountSID: String
    public let authToken: String
    /// The Calls API of the same account (the voice channel): TwilioCallsStub.swift.
    public let calls: TwilioCallsStub
    private let server: StubHTTPServer
    private let state = NIOLockedValueBox(State())

    private struct State {
        var script: [Step] = [Step("sent"), Step("delivered")]
        var messages: [Message] = []
        var posted: [Posted] = []
        var down = false
    }

    public init(accountSID: String = "AC" + String(repeating: "0", count: 32), authToken: String = "twilio-stub-token") async throws {
        self.accountSID = accountSID
        self.authToken = authToken
        let state = self.state
        let calls = TwilioCallsStub(accountSID: accountSID, authToken: authToken)
        self.calls = calls
        server = try await StubHTTPServer { request in
            if request.method == "POST", request.path == "/2010-04-01/Accounts/\(accountSID)/Calls.json" {
                guard request.header("Authorization") == "Basic " + Data("\(accountSID):\(authToken)".utf8).base64EncodedString() else {
                    return TwilioStubServer.error(401, 20003, "Authenticate")
                }
                return calls.answer(request)
            }
            return Self.answer(request, accountSID: accountSID, authToken: authToken, state: state)
        }
    }

    public var baseURL: String { server.baseURL }
    public var messages: [Message] { state.withLockedValue { $0.messages } }
    public var posted: [Posted] { state.withLockedValue { $0.posted } }

    /// The callbacks each later message gets (`[]`: none, a provider that never reports).
    public func script(_ steps: [Step]) { state.withLockedValue { $0.script = steps } }

    /// Answers 503 (code 20500) to every request while down.
    public func down(_ down: Bool) { state.withLockedValue { $0.down = down } }

    public func close() async { await server.close() }

    private static func answer(_ request: StubHTTPServer.Request, accountSID: String, authToken: String,
                               state: NIOLockedValueBox<State>) -> StubHTTPServer.Response {
        guard request.method == "POST", request.path == "/2010-04-01/Accounts/\(accountSID)/Messages.json" else {
            return error(404, 20404, "The requested resource \(request.path) was not found")
        }
        guard request.header("Authorization") == "Basic " + Data("\(accountSID):\(authToken)".utf8).base64EncodedString() else {
            return error(401, 20003, "Authenticate")
        }
        if state.withLockedValue({ $0.down }) { return error(503, 20500, "Service unavailable") }
        guard request.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true else {
            return error(400, 20001, "Content-Type must be application/x-www-form-urlencoded")
        }
        let form = request.form
        guard let to = form["To"], to.range(of: #"^\+[1-9][0-9]{6,14}$"#, options: .regularExpression) != nil else {
            return error(400, 21211, "The 'To' number is not a valid phone number.")
        }
        guard form["From"]?.isEmpty == false || form["MessagingServiceSid"]?.isEmpty == false else {
            return error(400, 21603, "A 'From' phone number is required.")
        }
        guard let body = form["Body"], !body.isEmpty else { return error(400, 21602, "Message body is required.") }
        guard body.count <= 1_600 else { return error(400, 21617, "The concatenated message body exceeds the 1600 character limit.") }
        let callback = form["StatusCallback"]
        if let callback {
            guard callback.count <= 1_000, let url = URL(string: callback), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                return error(400, 21609, "Invalid StatusCallback")
            }
        }
        let sid = "SM" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let from = form["From"] ?? ""
        let script = state.withLockedValue { state in
            state.messages.append(Message(sid: sid, to: to, body: body, statusCallback: callback))
            return state.script
        }
        if let callback, !script.isEmpty {
            let common = [("AccountSid", accountSID), ("ApiVersion", "2010-04-01"), ("From", from), ("To", to), ("MessageSid", sid), ("SmsSid", sid)]
            Task {
                for step in script {
                    try? await Task.sleep(for: step.after)
                    var fields = common + [("MessageStatus", step.status), ("SmsStatus", step.status)]
                    if let code = step.errorCode { fields.append(("ErrorCode", code)) }
                    let answer = await post(fields, to: callback, authToken: authToken)
                    state.withLockedValue { $0.posted.append(Posted(sid: sid, status: step.status, answer: answer)) }
                }
            }
        }
        let message: [String: Any] = [
            "sid": sid, "account_sid": accountSID, "to": to, "from": from, "body": body, "status": "queued",
            "num_segments": "1", "direction": "outbound-api", "api_version": "2010-04-01", "error_code": NSNull(),
            "uri": "/2010-04-01/Accounts/\(accountSID)/Messages/\(sid).json",
        ]
        let json = (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])) ?? Data()
        return .init(status: 201, body: String(decoding: json, as: UTF8.self))
    }

    static func error(_ status: Int, _ code: Int, _ message: String) -> StubHTTPServer.Response {
        .init(status: status, body: #"{"code":\#(code),"message":"\#(message)","more_info":"https://www.twilio.com/docs/errors/\#(code)","status":\#(status)}"#)
    }

    /// Twilio's signature of a POST to `url` with `fields`.
    public static func signature(url: String, fields: [(String, String)], authToken: String) -> String {
        let text = url + fields.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { $0.0 + $0.1 }.joined()
        return Data(HMAC<Insecure.SHA1>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: Array(authToken.utf8)))).base64EncodedString()
    }

    /// Posts one callback as Twilio does; the answer's status, 0 when there was none.
    static func post(_ fields: [(String, String)], to url: String, authToken: String) async -> Int {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "X-Twilio-Signature", value: signature(url: url, fields: fields, authToken: authToken))
        request.headers.add(name: "User-Agent", value: "TwilioProxy/1.1")
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)) else { return 0 }
        _ = try? await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }
}
