import Crypto
import Foundation
import HeraldRuntime
import JWTKit
import NIOConcurrencyHelpers
import _CryptoExtras

/// A local Apple (Sign in with Apple) over HTTP on loopback: `GET /auth/keys` serves the JWKS
/// of RSA-2048 keys made for this run (``rotate(keepingOld:)`` adds a key, optionally dropping
/// the others), and the signers make what Apple signs with those keys: identity tokens with
/// any claims (``identityToken(audience:subject:rawNonce:email:isPrivateEmail:overriding:removing:key:)``)
/// and server-to-server notifications (``notification(audience:type:subject:email:isPrivateEmail:jwtID:issuedAt:overriding:key:)``).
///
/// Routes are a table of `METHOD /path` → responder: another file adds endpoints with
/// ``route(_:_:_:)`` (`AppleStubServer+Token.swift`: the token and revoke endpoints), keeping
/// its own state in the closures it registers.
public final class AppleStubServer: Sendable {
    /// A claim value as JSON: Apple sends some booleans as strings, so both are expressible.
    public enum Claim: Sendable, Encodable, Equatable {
        case string(String), int(Int64), bool(Bool), strings([String])

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .string(let v): try c.encode(v)
            case .int(let v): try c.encode(v)
            case .bool(let v): try c.encode(v)
            case .strings(let v): try c.encode(v)
            }
        }
    }

    /// Which key signs a token.
    public enum SigningKey: Sendable {
        /// The newest key of the JWKS (its `kid`).
        case current
        /// A key of the JWKS by `kid` (an older one after a rotation).
        case kid(String)
        /// A key made for this token and never published, under `kid` (a known `kid`: a bad
        /// signature; an unknown one: an unknown key).
        case unpublished(kid: String)
    }

    struct Key: Sendable {
        let kid: String
        let privateKey: JWTKit.Insecure.RSA.PrivateKey
        /// `{"kty":"RSA",…}` for the JWKS.
        let jwk: String
    }

    struct State: Sendable {
        var keys: [Key]
        var cacheControl: String?
        var jwksOverride: StubHTTPServer.Response?
        var routes: [String: StubHTTPServer.Responder] = [:]
        var keyCounter = 0
    }

    public static let issuer = "https://appleid.apple.com"
    public static let jwksPath = "/auth/keys"

    public let http: StubHTTPServer
    let state: NIOLockedValueBox<State>

    /// Starts on a free loopback port with one key; `cacheControl` is sent with the JWKS.
    public init(cacheControl: String? = "max-age=3600") async throws {
        let first = try Self.makeKey(kid: "stub-key-1")
        let state = NIOLockedValueBox(State(keys: [first], cacheControl: cacheControl, keyCounter: 1))
        self.state = state
        http = try await StubHTTPServer { request in
            let key = "\(request.method) \(request.path)"
            guard let responder = state.withLockedValue({ $0.routes[key] }) else {
                return .init(status: 404, body: #"{"error":"not_found"}"#)
            }
            return responder(request)
        }
        route("GET", Self.jwksPath) { [state] _ in
            state.withLockedValue { state in
                if let override = state.jwksOverride { return override }
                let body = #"{"keys":["# + state.keys.map(\.jwk).joined(separator: ",") + "]}"
                return .init(status: 200, body: body, headers: state.cacheControl.map { [("Cache-Control", $0)] } ?? [])
            }
        }
    }

    public var baseURL: String { http.baseURL }
    /// What `apple.jwks_url` points at.
    public var jwksURL: String { baseURL + Self.jwksPath }

    /// Adds (or replaces) the answer to `method path`.
    public func route(_ method: String, _ path: String, _ responder: @escaping StubHTTPServer.Responder) {
        state.withLockedValue { $0.routes["\(method) \(path)"] = responder }
    }

    /// How many times the JWKS was fetched.
    public var jwksFetches: Int { http.requests.filter { $0.path == Self.jwksPath }.count }

    /// The key ids published now, oldest first.
    public var keyIDs: [String] { state.withLockedValue { $0.keys.map(\.kid) } }

    /// Makes a new key and publishes it (it becomes ``SigningKey/current``); the older keys
    /// stay published unless `keepingOld` is false. Returns the new `kid`.
    @discardableResult
    public func rotate(keepingOld: Bool = true) throws -> String {
        let number = state.withLockedValue { $0.keyCounter += 1; return $0.keyCounter }
        let key = try Self.makeKey(kid: "stub-key-\(number)")
        state.withLockedValue { state in
            if !keepingOld { state.keys.removeAll() }
            state.keys.append(key)
        }
        return key.kid
    }

    /// The `Cache-Control` the JWKS is served with (nil: none).
    public func setCacheControl(_ value: String?) {
        state.withLockedValue { $0.cacheControl = value }
    }

    /// Answers the JWKS with `response` instead (an outage: 503, a hang); nil: the JWKS again.
    public func failJWKS(with response: StubHTTPServer.Response?) {
        state.withLockedValue { $0.jwksOverride = response }
    }

    /// An identity token as Apple issues it: `iss`, `aud`, `iat` now, `exp` in ten minutes,
    /// `sub`, `nonce` = SHA-256 hex of `rawNonce` (what the app sends Apple), `email` with
    /// `email_verified` and `is_private_email` as strings (as Apple sends them),
    /// `real_user_status` 2, `auth_time`, `nonce_supported`. `overriding` replaces or adds
    /// claims, `removing` drops them.
    public func identityToken(
        audience: String, subject: String, rawNonce: String?, email: String? = nil, isPrivateEmail: Bool = false,
        overriding: [String: Claim] = [:], removing: Set<String> = [], key: SigningKey = .current
    ) async throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        var claims: [String: Claim] = [
            "iss": .string(Self.issuer), "aud": .string(audience), "sub": .string(subject),
            "iat": .int(now), "exp": .int(now + 600), "auth_time": .int(now),
            "nonce_supported": .bool(true), "real_user_status": .int(2),
        ]
        if let rawNonce { claims["nonce"] = .string(Self.sha256Hex(rawNonce)) }
        if let email {
            claims["email"] = .string(email)
            claims["email_verified"] = .string("true")
            claims["is_private_email"] = .string(isPrivateEmail ? "true" : "false")
        }
        claims.merge(overriding) { _, new in new }
        for name in removing { claims[name] = nil }
        return try await sign(claims, key: key)
    }

    /// A server-to-server notification as Apple POSTs it (`{"payload": <this>}`): `iss`,
    /// `aud`, `iat`, `jti`, and `events` as a JSON string with `type`, `sub`, `event_time`
    /// and, for the email events, `email` and `is_private_email`.
    public func notification(
        audience: String, type: String, subject: String, email: String? = nil, isPrivateEmail: Bool? = nil,
        jwtID: String = UUID().uuidString.lowercased(), issuedAt: Date = Date(),
        overriding: [String: Claim] = [:], key: SigningKey = .current
    ) async throws -> String {
        let eventTime = Int64(issuedAt.timeIntervalSince1970)
        var event: [String: Claim] = ["type": .string(type), "sub": .string(subject), "event_time": .int(eventTime)]
        if let email { event["email"] = .string(email) }
        if let isPrivateEmail { event["is_private_email"] = .string(isPrivateEmail ? "true" : "false") }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let events = String(decoding: try encoder.encode(event), as: UTF8.self)
        var claims: [String: Claim] = [
            "iss": .string(Self.issuer), "aud": .string(audience), "iat": .int(Int64(issuedAt.timeIntervalSince1970)),
            "jti": .string(jwtID), "events": .string(events),
        ]
        claims.merge(overriding) { _, new in new }
        return try await sign(claims, key: key)
    }

    /// Signs `claims` (RS256, `kid` in the header) with `key`.
    public func sign(_ claims: [String: Claim], key: SigningKey = .current) async throws -> String {
        let signer: Key = try {
            switch key {
            case .current:
                return state.withLockedValue { $0.keys.last! }
            case .kid(let kid):
                guard let found = state.withLockedValue({ $0.keys.first { $0.kid == kid } }) else {
                    throw StubError("no published key \(kid)")
                }
                return found
            case .unpublished(let kid):
                return try Self.makeKey(kid: kid)
            }
        }()
        let keys = JWTKeyCollection()
        await keys.add(rsa: signer.privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: signer.kid))
        return try await keys.sign(StubClaims(values: claims), kid: JWKIdentifier(string: signer.kid))
    }

    public func close() async { await http.close() }

    static func makeKey(kid: String) throws -> Key {
        let backing = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let privateKey = try JWTKit.Insecure.RSA.PrivateKey(backing: backing)
        let (modulus, exponent) = try privateKey.publicKey.getKeyPrimitives()
        let jwk = #"{"kty":"RSA","kid":"\#(kid)","use":"sig","alg":"RS256","n":"\#(base64URL(modulus))","e":"\#(base64URL(exponent))"}"#
        return Key(kid: kid, privateKey: privateKey, jwk: jwk)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func sha256Hex(_ text: String) -> String {
        SHA256Hex.of(text)
    }
}

/// Any claims, encoded as a JSON object (the stub signs whatever a test asks for).
struct StubClaims: JWTPayload {
    var values: [String: AppleStubServer.Claim]

    init(values: [String: AppleStubServer.Claim]) { self.values = values }

    init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "the stub only signs"))
    }

    func encode(to encoder: any Encoder) throws { try values.encode(to: encoder) }

    func verify(using _: some JWTAlgorithm) async throws {}
}

/// A misuse of a stub by a test.
public struct StubError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
