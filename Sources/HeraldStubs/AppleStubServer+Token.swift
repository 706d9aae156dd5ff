import Crypto
import Foundation
import NIOConcurrencyHelpers

extension AppleStubServer {
    public static let tokenPath = "/auth/token"
    public static let revokePath = "/auth/revoke"

    /// What `apple.token_url` points at.
    public var tokenURL: String { baseURL + Self.tokenPath }
    /// What `apple.revoke_url` points at.
    public var revokeURL: String { baseURL + Self.revokePath }

    /// Starts answering `POST /auth/token` and `POST /auth/revoke` as Apple does for the team
    /// `teamID` whose Sign in with Apple key `keyID` has the public half `teamKey`. The returned
    /// endpoints issue codes, count calls and inject failures.
    public func tokenEndpoints(teamID: String, keyID: String, teamKey: P256.Signing.PublicKey) -> AppleTokenEndpoints {
        let endpoints = AppleTokenEndpoints(teamID: teamID, keyID: keyID, teamKey: teamKey, stub: self)
        route("POST", Self.tokenPath) { [endpoints] request in endpoints.token(request) }
        route("POST", Self.revokePath) { [endpoints] request in endpoints.revoke(request) }
        return endpoints
    }
}

/// The local Apple's token and revoke endpoints (``AppleStubServer/tokenEndpoints(teamID:keyID:teamKey:)``).
/// The client secret is checked as Apple does: an ES256 JWS whose signature verifies with the
/// team's public key, header `kid` the key id, `iss` the team id, `sub` the request's
/// `client_id`, `aud` https://appleid.apple.com, `iat` not in the future, `exp` not past and at
/// most six months after `iat`; anything else is `invalid_client`. A code (``issueCode(subject:clientID:issuedAt:)``)
/// is exchanged once, within five minutes, for the client id it was issued to; anything else is
/// `invalid_grant`. An exchange answers `access_token`, `refresh_token` and an `id_token` signed
/// with the JWKS key, `sub` the code's. A revocation answers 200, also for a token Apple does
/// not know (as Apple does).
public final class AppleTokenEndpoints: Sendable {
    /// An injected answer for the next call(s) of an endpoint.
    public enum Failure: Sendable, Equatable {
        case invalidGrant, invalidClient
        case status(Int)
        /// Never answers (the client times out).
        case hang
        /// Does what was asked (exchanges the code, revokes the token), then never answers:
        /// Apple acted and the answer was lost.
        case answerLost
    }

    public enum Endpoint: Sendable { case token, revoke }

    struct Code {
        var subject: String
        var clientID: String
        var issuedAt: Date
        var idToken: String
        var used = false
        /// Token requests for this code that reached the code check (not an injected failure).
        var calls = 0
    }

    struct Token {
        var subject: String
        var clientID: String
        var revoked = false
        /// Revoke requests for this token that reached the token check (not an injected failure).
        var calls = 0
    }

    struct State {
        var codes: [String: Code] = [:]
        var refreshTokens: [String: Token] = [:]
        var exchanges = 0
        var revocations = 0
        var failures: [Endpoint: [Failure]] = [:]
        var outage: Failure?
        var refusals: [String] = []
        var clientSecrets: Set<String> = []
    }

    public static let codeLifetime: TimeInterval = 300
    public static let maximumSecretLifetime: TimeInterval = 15_777_000

    public let teamID: String
    public let keyID: String
    let teamKey: P256.Signing.PublicKey
    let stub: AppleStubServer
    let state = NIOLockedValueBox(State())

    init(teamID: String, keyID: String, teamKey: P256.Signing.PublicKey, stub: AppleStubServer) {
        self.teamID = teamID
        self.keyID = keyID
        self.teamKey = teamKey
        self.stub = stub
    }

    /// A fresh authorization code for `subject` signing in to `clientID`, as the app gets it
    /// from Apple; its ID token is signed now (with the JWKS's current key).
    public func issueCode(subject: String, clientID: String, issuedAt: Date = Date()) async throws -> String {
        let code = "c" + (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() + ".0.stub"
        let idToken = try await stub.identityToken(audience: clientID, subject: subject, rawNonce: nil)
        state.withLockedValue { $0.codes[code] = Code(subject: subject, clientID: clientID, issuedAt: issuedAt, idToken: idToken) }
        return code
    }

    /// Codes exchanged (200 answers of the token endpoint).
    public var exchanges: Int { state.withLockedValue { $0.exchanges } }
    /// Tokens revoked (200 answers of the revoke endpoint to a token it issued and had not revoked).
    public var revocations: Int { state.withLockedValue { $0.revocations } }
    /// Requests each endpoint received, whatever the answer.
    public func calls(_ endpoint: Endpoint) -> Int {
        let path = endpoint == .token ? AppleStubServer.tokenPath : AppleStubServer.revokePath
        return stub.http.requests.filter { $0.path == path }.count
    }
    /// The refresh tokens issued to `subject`, and whether each is revoked.
    public func refreshTokens(of subject: String) -> [(token: String, revoked: Bool)] {
        state.withLockedValue { $0.refreshTokens.filter { $0.value.subject == subject }.map { ($0.key, $0.value.revoked) } }
    }
    /// Why each refused request was refused, in order (the stub's own words).
    public var refusals: [String] { state.withLockedValue { $0.refusals } }
    /// Every client secret (a JWT signed with the team's key) that reached the endpoints.
    public var clientSecrets: Set<String> { state.withLockedValue { $0.clientSecrets } }

    /// What reached Apple for one `sub`: code exchanges and revocations done, and the calls
    /// that carried one of its codes or tokens (a second call for a code or token is a repeat).
    public struct SubjectCounts: Sendable, Equatable {
        public var exchanges = 0
        public var exchangeCalls = 0
        public var revocations = 0
        public var revokeCalls = 0
        /// The most calls any one of its codes got (more than 1: a code was sent twice).
        public var maxCallsPerCode = 0
        /// The most calls any one of its refresh tokens got.
        public var maxCallsPerToken = 0

        public init() {}
    }

    /// ``SubjectCounts`` of every `sub` a code was issued to.
    public var countsBySubject: [String: SubjectCounts] {
        state.withLockedValue { state in
            var out: [String: SubjectCounts] = [:]
            for code in state.codes.values {
                out[code.subject, default: .init()].exchangeCalls += code.calls
                out[code.subject, default: .init()].maxCallsPerCode = max(out[code.subject]!.maxCallsPerCode, code.calls)
                if code.used { out[code.subject, default: .init()].exchanges += 1 }
            }
            for token in state.refreshTokens.values {
                out[token.subject, default: .init()].revokeCalls += token.calls
                out[token.subject, default: .init()].maxCallsPerToken = max(out[token.subject]!.maxCallsPerToken, token.calls)
                if token.revoked { out[token.subject, default: .init()].revocations += 1 }
            }
            return out
        }
    }

    /// Every call of both endpoints gets `failure` until ``endOutage()`` (after any failures
    /// queued with ``fail(_:with:count:)``): Apple down or hanging for a while.
    public func startOutage(_ failure: Failure) {
        state.withLockedValue { $0.outage = failure }
    }

    public func endOutage() {
        state.withLockedValue { $0.outage = nil }
    }

    /// The next `count` calls of `endpoint` get `failure` instead of their answer.
    public func fail(_ endpoint: Endpoint, with failure: Failure, count: Int = 1) {
        state.withLockedValue { $0.failures[endpoint, default: []] += Array(repeating: failure, count: count) }
    }

    func token(_ request: StubHTTPServer.Request) -> StubHTTPServer.Response {
        let injected = nextFailure(.token)
        if let injected, injected != .answerLost { return response(for: injected) }
        let form = request.form
        guard form["grant_type"] == "authorization_code" else { return error("unsupported_grant_type", "grant_type is not authorization_code") }
        guard let clientID = form["client_id"], let code = form["code"] else { return error("invalid_request", "client_id or code missing") }
        if let why = secretProblem(form["client_secret"], clientID: clientID) { return error("invalid_client", why) }
        let now = Date()
        let outcome: Result<(String, String), StubError> = state.withLockedValue { state in
            guard var grant = state.codes[code] else { return .failure(StubError("unknown code")) }
            grant.calls += 1
            state.codes[code] = grant
            guard !grant.used else { return .failure(StubError("code already used")) }
            guard now.timeIntervalSince(grant.issuedAt) <= Self.codeLifetime else { return .failure(StubError("code expired")) }
            guard grant.clientID == clientID else { return .failure(StubError("code issued to another client_id")) }
            grant.used = true
            state.codes[code] = grant
            let refresh = "r" + (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() + ".0.stub"
            state.refreshTokens[refresh] = Token(subject: grant.subject, clientID: clientID)
            state.exchanges += 1
            return .success((refresh, grant.idToken))
        }
        switch outcome {
        case .failure(let why):
            return error("invalid_grant", why.description)
        case .success(let (refresh, idToken)):
            if injected == .answerLost { return .hang() }
            let access = "a" + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            return .init(status: 200, body: #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(refresh)","id_token":"\#(idToken)"}"#)
        }
    }

    func revoke(_ request: StubHTTPServer.Request) -> StubHTTPServer.Response {
        let injected = nextFailure(.revoke)
        if let injected, injected != .answerLost { return response(for: injected) }
        let form = request.form
        guard let clientID = form["client_id"], let token = form["token"] else { return error("invalid_request", "client_id or token missing") }
        if let why = secretProblem(form["client_secret"], clientID: clientID) { return error("invalid_client", why) }
        state.withLockedValue { state in
            guard var known = state.refreshTokens[token] else { return }
            known.calls += 1
            if known.clientID == clientID, !known.revoked {
                known.revoked = true
                state.revocations += 1
            }
            state.refreshTokens[token] = known
        }
        return injected == .answerLost ? .hang() : .init(status: 200, body: "")
    }

    /// The failure this call of `endpoint` gets: the next queued one, else a standing outage.
    private func nextFailure(_ endpoint: Endpoint) -> Failure? {
        state.withLockedValue { state in
            guard var queue = state.failures[endpoint], !queue.isEmpty else { return state.outage }
            let first = queue.removeFirst()
            state.failures[endpoint] = queue
            return first
        }
    }

    private func response(for failure: Failure) -> StubHTTPServer.Response {
        switch failure {
        case .invalidGrant: error("invalid_grant", "injected")
        case .invalidClient: error("invalid_client", "injected")
        case .status(let status): .init(status: status, body: #"{"error":"server_error"}"#)
        case .hang, .answerLost: .hang()
        }
    }

    private func error(_ code: String, _ why: String) -> StubHTTPServer.Response {
        state.withLockedValue { $0.refusals.append("\(code): \(why)") }
        return .init(status: 400, body: #"{"error":"\#(code)"}"#)
    }

    /// Nil when `secret` is a client secret Apple accepts for `clientID`, else why not.
    func secretProblem(_ secret: String?, clientID: String) -> String? {
        guard let secret else { return "client_secret missing" }
        state.withLockedValue { _ = $0.clientSecrets.insert(secret) }
        let parts = secret.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URL(parts[0]), let payloadData = Self.base64URL(parts[1]),
              let signature = Self.base64URL(parts[2]),
              let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
              let claims = try? JSONSerialization.jsonObject(with: payloadData) as? [String: Any] else {
            return "client_secret is not a JWS"
        }
        guard header["alg"] as? String == "ES256" else { return "alg is not ES256" }
        guard header["kid"] as? String == keyID else { return "kid is not the key id" }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              teamKey.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8)) else {
            return "signature does not verify with the team's key"
        }
        guard claims["iss"] as? String == teamID else { return "iss is not the team id" }
        guard claims["sub"] as? String == clientID else { return "sub is not the client_id" }
        let audience = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
        guard audience.contains("https://appleid.apple.com") else { return "aud is not https://appleid.apple.com" }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, let exp = (claims["exp"] as? NSNumber)?.doubleValue else {
            return "iat or exp missing"
        }
        let now = Date().timeIntervalSince1970
        guard iat <= now + 60 else { return "iat in the future" }
        guard exp > now else { return "expired" }
        guard exp - iat <= Self.maximumSecretLifetime else { return "lifetime over six months" }
        return nil
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
