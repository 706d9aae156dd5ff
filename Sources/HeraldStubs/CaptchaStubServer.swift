import Foundation
import NIOConcurrencyHelpers

/// A local siteverify endpoint (reCAPTCHA, hCaptcha and Turnstile share its form): a `POST`
/// of `application/x-www-form-urlencoded` `secret`, `response` and optional `remoteip`,
/// answered with `success`, `hostname`, `action`, `score` and `error-codes`. Tokens are
/// registered by the test with what the provider would say of them; each is single use, as
/// the providers' are. A request that is not exactly that form is answered 400.
public final class CaptchaStubServer: Sendable {
    /// What the provider says of a registered token.
    public struct Token: Sendable {
        public var score: Double?
        public var hostname: String?
        public var action: String?
        public init(score: Double? = nil, hostname: String? = "app.example", action: String? = nil) {
            self.score = score
            self.hostname = hostname
            self.action = action
        }
    }

    /// How the endpoint answers: normally, with an HTTP error, or not at all.
    public enum Mode: Sendable { case normal, status(Int), hang }

    /// One verification the endpoint answered: the form it read (secret and token included).
    public struct Check: Sendable {
        public var secret: String
        public var response: String
        public var remoteIP: String?
    }

    public let secret: String
    private let server: StubHTTPServer
    private let state = NIOLockedValueBox<(tokens: [String: Token], used: Set<String>, mode: Mode, checks: [Check])>(([:], [], .normal, []))

    public init(secret: String = "stub-captcha-secret") async throws {
        self.secret = secret
        let state = self.state
        server = try await StubHTTPServer { request in Self.answer(request, secret: secret, state: state) }
    }

    /// The siteverify URL (`sms.app_verification.<provider>.url`).
    public var url: String { server.baseURL + "/siteverify" }
    /// Requests that reached the endpoint, answered or not.
    public var requestCount: Int { server.requestCount }
    /// The well-formed verifications it answered.
    public var checks: [Check] { state.withLockedValue { $0.checks } }

    public func register(_ token: String, _ answer: Token = Token()) {
        state.withLockedValue { $0.tokens[token] = answer }
    }

    public func setMode(_ mode: Mode) {
        state.withLockedValue { $0.mode = mode }
    }

    public func close() async { await server.close() }

    private static func answer(_ request: StubHTTPServer.Request, secret: String,
                               state: NIOLockedValueBox<(tokens: [String: Token], used: Set<String>, mode: Mode, checks: [Check])>) -> StubHTTPServer.Response {
        switch state.withLockedValue({ $0.mode }) {
        case .normal: break
        case .status(let status): return StubHTTPServer.Response(status: status, body: #"{"error":"injected"}"#)
        case .hang: return .hang()
        }
        guard request.method == "POST", request.path == "/siteverify" else { return StubHTTPServer.Response(status: 404, body: "{}") }
        guard request.header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
              let form = strictForm(request.bodyText),
              Set(form.keys).isSubset(of: ["secret", "response", "remoteip"]) else {
            return StubHTTPServer.Response(status: 400, body: #"{"success":false,"error-codes":["bad-request"]}"#)
        }
        func failure(_ codes: [String]) -> StubHTTPServer.Response {
            json(["success": false, "error-codes": codes])
        }
        guard let given = form["secret"], !given.isEmpty else { return failure(["missing-input-secret"]) }
        guard let response = form["response"], !response.isEmpty else { return failure(["missing-input-response"]) }
        guard given == secret else { return failure(["invalid-input-secret"]) }
        return state.withLockedValue { s -> StubHTTPServer.Response in
            s.checks.append(Check(secret: given, response: response, remoteIP: form["remoteip"]))
            guard let token = s.tokens[response] else { return failure(["invalid-input-response"]) }
            guard s.used.insert(response).inserted else { return failure(["timeout-or-duplicate"]) }
            var body: [String: Any] = ["success": true, "challenge_ts": ISO8601DateFormatter().string(from: Date()), "error-codes": [String]()]
            if let hostname = token.hostname { body["hostname"] = hostname }
            if let action = token.action { body["action"] = action }
            if let score = token.score { body["score"] = score }
            return json(body)
        }
    }

    private static func json(_ object: [String: Any]) -> StubHTTPServer.Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return StubHTTPServer.Response(status: 200, body: String(decoding: data, as: UTF8.self))
    }

    /// `a=1&b=2`, each name once, `+` and `%XX` decoded; nil for anything else.
    static func strictForm(_ text: String) -> [String: String]? {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2,
                  let name = String(parts[0]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                  let value = String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                  !name.isEmpty, out[name] == nil else { return nil }
            out[name] = value
        }
        return out
    }
}
