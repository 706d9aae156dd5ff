import _CryptoExtras
import Crypto
import Foundation
import NIOConcurrencyHelpers

/// A local server (HTTP/1.1, loopback) that speaks FCM HTTP v1 and Google's OAuth2 token
/// endpoint. `POST /token` verifies the RS256 JWT assertion with the service account's public
/// key (`iss`, `aud`, `scope`, `iat`/`exp`) and issues an access token (`expires_in`
/// configurable). `POST /v1/projects/{project}/messages:send` requires a live token it issued
/// and a data-only, high-priority message with a `token`; the responder answers per device token.
public final class FCMStubServer: Sendable {
    public struct Message: Sendable {
        public var project: String
        public var token: String
        public var data: [String: String]
        public var android: [String: String]
        public var accessToken: String
    }

    public struct Response: Sendable {
        public var status: Int
        /// FCM's `error.status` and `details[].errorCode`.
        public var errorStatus: String?
        public var errorCode: String?

        public init(status: Int = 200, errorStatus: String? = nil, errorCode: String? = nil) {
            self.status = status
            self.errorStatus = errorStatus
            self.errorCode = errorCode
        }

        public static let ok = Response()
        public static let unregistered = Response(status: 404, errorStatus: "NOT_FOUND", errorCode: "UNREGISTERED")
        public static let invalidArgument = Response(status: 400, errorStatus: "INVALID_ARGUMENT", errorCode: "INVALID_ARGUMENT")
    }

    public typealias Responder = @Sendable (Message) -> Response

    struct State {
        var issued: [String: Date] = [:]
        var tokenRequests = 0
        var messages: [Message] = []
        var rejected: [String] = []
        var responder: Responder
        var expiresIn: Int
    }

    private let server: StubHTTPServer
    private let state: NIOLockedValueBox<State>

    public init(publicKey: _RSA.Signing.PublicKey, clientEmail: String, expiresIn: Int = 3600, responder: @escaping Responder = { _ in .ok }) async throws {
        let state = NIOLockedValueBox(State(responder: responder, expiresIn: expiresIn))
        self.state = state
        let box = NIOLockedValueBox<String>("")
        server = try await StubHTTPServer { request in
            let base = box.withLockedValue { $0 }
            return Self.handle(request, state: state, publicKey: publicKey, clientEmail: clientEmail, tokenURL: base + "/token")
        }
        box.withLockedValue { $0 = server.baseURL }
    }

    public var baseURL: String { server.baseURL }
    public var tokenURL: String { server.baseURL + "/token" }
    public var tokenRequests: Int { state.withLockedValue { $0.tokenRequests } }
    public var messages: [Message] { state.withLockedValue { $0.messages } }
    public var violations: [String] { state.withLockedValue { $0.rejected } }

    public func respond(with responder: @escaping Responder) { state.withLockedValue { $0.responder = responder } }
    /// Forgets every access token issued (as if they were revoked).
    public func revokeTokens() { state.withLockedValue { $0.issued = [:] } }
    public func close() async { await server.close() }

    static func handle(_ request: StubHTTPServer.Request, state: NIOLockedValueBox<State>, publicKey: _RSA.Signing.PublicKey,
                       clientEmail: String, tokenURL: String) -> StubHTTPServer.Response {
        func refuse(_ status: Int, _ why: String, errorStatus: String) -> StubHTTPServer.Response {
            state.withLockedValue { $0.rejected.append(why) }
            return .init(status: status, body: #"{"error":{"code":\#(status),"message":"\#(why)","status":"\#(errorStatus)"}}"#)
        }
        if request.path == "/token" {
            guard request.method == "POST", request.form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer",
                  let assertion = request.form["assertion"],
                  let (header, claims, signature, input) = APNsStubServer.parseJWT(assertion), header["alg"] as? String == "RS256",
                  publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5)
            else { return refuse(400, "invalid_grant: bad assertion", errorStatus: "INVALID_ARGUMENT") }
            let now = Int(Date().timeIntervalSince1970)
            guard claims["iss"] as? String == clientEmail, claims["aud"] as? String == tokenURL,
                  claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging",
                  let iat = claims["iat"] as? Int, let exp = claims["exp"] as? Int, iat <= now + 60, exp > now, exp - iat <= 3600
            else { return refuse(400, "invalid_grant: claims", errorStatus: "INVALID_ARGUMENT") }
            let token = "ya29.stub-" + UUID().uuidString
            let expiresIn = state.withLockedValue { s -> Int in
                s.tokenRequests += 1
                s.issued[token] = Date().addingTimeInterval(TimeInterval(s.expiresIn))
                return s.expiresIn
            }
            return .init(status: 200, body: #"{"access_token":"\#(token)","expires_in":\#(expiresIn),"token_type":"Bearer"}"#)
        }
        let parts = request.path.split(separator: "/")
        guard request.method == "POST", parts.count == 4, parts[0] == "v1", parts[1] == "projects", parts[3] == "messages:send" else {
            return refuse(404, "no such path", errorStatus: "NOT_FOUND")
        }
        let bearer = request.header("Authorization") ?? ""
        let access = bearer.hasPrefix("Bearer ") ? String(bearer.dropFirst(7)) : ""
        guard let expires = state.withLockedValue({ $0.issued[access] }), expires > Date() else {
            return refuse(401, "Request had invalid authentication credentials.", errorStatus: "UNAUTHENTICATED")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any],
              let message = object["message"] as? [String: Any], let token = message["token"] as? String,
              let data = message["data"] as? [String: String], message["notification"] == nil,
              let android = message["android"] as? [String: Any], android["priority"] as? String == "HIGH"
        else { return refuse(400, "not a data-only high-priority message", errorStatus: "INVALID_ARGUMENT") }
        let received = Message(project: String(parts[2]), token: token, data: data,
                               android: android.compactMapValues { $0 as? String }, accessToken: access)
        let responder = state.withLockedValue { s -> Responder in
            s.messages.append(received)
            return s.responder
        }
        let answer = responder(received)
        if answer.status == 200 {
            return .init(status: 200, body: #"{"name":"projects/\#(parts[2])/messages/0:\#(UUID().uuidString)"}"#)
        }
        let code = answer.errorCode.map { #","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#($0)"}]"# } ?? ""
        return .init(status: answer.status, body: #"{"error":{"code":\#(answer.status),"message":"stub","status":"\#(answer.errorStatus ?? "INTERNAL")"\#(code)}}"#)
    }
}
