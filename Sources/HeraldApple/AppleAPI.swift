import AsyncHTTPClient
import Foundation
import HeraldRuntime
import NIOCore
import NIOHTTP1

/// One call to Apple's Sign in with Apple REST API.
public enum AppleCall: Sendable {
    /// `POST /auth/token` with `grant_type=authorization_code`.
    case exchange(clientID: String, code: Secret)
    /// `POST /auth/revoke` with `token_type_hint=refresh_token`.
    case revoke(clientID: String, refreshToken: Secret)

    var clientID: String {
        switch self {
        case .exchange(let clientID, _), .revoke(let clientID, _): clientID
        }
    }
}

/// What a successful exchange returned (Apple's `TokenResponse`): the refresh token (kept,
/// sealed) and the ID token (checked). The access token is not kept.
public struct AppleGrant: Sendable, Equatable {
    public var refreshToken: Secret
    public var idToken: String
}

/// Apple's token and revoke endpoints as the one provider of the `apple` channel's chain (so
/// every call is an attempt record and counted in `herald_provider_calls_total{channel="apple"}`).
/// A form POST with the client secret (``AppleClientSecret``). Answers: 200 accepted; 400
/// `{"error": …}` (Apple's `ErrorResponse`): `invalid_client` is our credentials (the next
/// try, after an operator fixed them, may pass), every other error is final; 429 and 5xx,
/// no answer, a redirect: failed, retried through the delay tiers.
public struct AppleAPI: DeliveryProvider {
    public let name = "apple"
    public let tokenURL: String
    public let revokeURL: String
    let http: ProviderHTTP
    let secrets: AppleClientSecret

    public init(tokenURL: String, revokeURL: String, http: ProviderHTTP, secrets: AppleClientSecret) {
        self.tokenURL = tokenURL
        self.revokeURL = revokeURL
        self.http = http
        self.secrets = secrets
    }

    public func send(_ call: AppleCall, context: DeliveryContext) async -> ProviderAnswer<AppleGrant> {
        let secret: Secret
        do {
            secret = try await secrets.secret(for: call.clientID)
        } catch {
            return .next("client_secret_not_signed")
        }
        let (url, fields): (String, [(String, String)])
        switch call {
        case .exchange(let clientID, let code):
            (url, fields) = (tokenURL, [("client_id", clientID), ("client_secret", secret.revealed), ("code", code.revealed),
                                        ("grant_type", "authorization_code")])
        case .revoke(let clientID, let token):
            (url, fields) = (revokeURL, [("client_id", clientID), ("client_secret", secret.revealed), ("token", token.revealed),
                                         ("token_type_hint", "refresh_token")])
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: ProviderHTTP.formEncode(fields)))
        return await http.send(request, logger: context.logger) { status, body in Self.answer(call, status: status, body: body) }
    }

    static func answer(_ call: AppleCall, status: Int, body: ByteBuffer) -> ProviderAnswer<AppleGrant> {
        if (200..<300).contains(status) {
            guard case .exchange = call else { return .accepted(nil, httpStatus: status) }
            guard let response = try? JSONDecoder().decode(TokenResponse.self, from: Data(buffer: body)),
                  let refresh = response.refreshToken, !refresh.isEmpty, let idToken = response.idToken, !idToken.isEmpty else {
                // Apple took the code (it is used now): final, never exchanged again.
                return .refused("malformed_token_response", httpStatus: status)
            }
            return ProviderAnswer(.accepted(providerMessageID: nil), httpStatus: status,
                                  detail: AppleGrant(refreshToken: Secret(refresh), idToken: idToken))
        }
        let error = (try? JSONDecoder().decode(ErrorResponse.self, from: Data(buffer: body)))?.error
        if let error, status == 400 || status == 401 {
            return error == "invalid_client" ? .next(error, httpStatus: status) : .refused(Self.known(error), httpStatus: status)
        }
        switch ProviderHTTP.classify(status: status, code: nil) {
        case .refused(let code)?: return .refused(code, httpStatus: status)
        case .next(let code)?: return .next(code, httpStatus: status)
        case .accepted?, nil: return .next("http-\(status)", httpStatus: status)
        }
    }

    /// Apple's documented error codes as they are; anything else as `apple_error` (its text is
    /// Apple's, not ours to store).
    static func known(_ error: String) -> String {
        ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]
            .contains(error) ? error : "apple_error"
    }

    struct TokenResponse: Decodable {
        var refreshToken: String?
        var idToken: String?
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token", idToken = "id_token" }
    }

    struct ErrorResponse: Decodable { var error: String }
}
