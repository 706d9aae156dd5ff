import Foundation
import JWTKit

/// The claims of a JWT Apple signs, as sent: identity tokens (`sub`, `email`, `nonce`, …)
/// and server-to-server notifications (`jti`, `events`). Booleans Apple sends either as JSON
/// booleans or as the strings `"true"`/`"false"`; both are read. Only the signature is checked
/// while decoding: `AppleIdentityVerifier` checks the claims, each with its own error.
public struct AppleTokenClaims: JWTPayload, Equatable {
    public var issuer: String
    /// `aud`: one string, or several.
    public var audience: [String]
    public var issuedAt: Date
    public var expiresAt: Date?
    public var subject: String?
    public var email: String?
    public var emailVerified: Bool?
    public var isPrivateEmail: Bool?
    /// 0 unsupported, 1 unknown, 2 likely real (Apple's `real_user_status`).
    public var realUserStatus: Int?
    public var nonce: String?
    public var nonceSupported: Bool?
    public var jwtID: String?
    /// `events` of a notification: a JSON object that Apple sends as a string (this text).
    public var events: String?

    enum CodingKeys: String, CodingKey {
        case issuer = "iss", audience = "aud", issuedAt = "iat", expiresAt = "exp", subject = "sub"
        case email, nonce, events
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email"
        case realUserStatus = "real_user_status", nonceSupported = "nonce_supported", jwtID = "jti"
    }

    public init(issuer: String, audience: [String], issuedAt: Date, expiresAt: Date? = nil, subject: String? = nil) {
        self.issuer = issuer
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.subject = subject
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try c.decode(String.self, forKey: .issuer)
        if let one = try? c.decode(String.self, forKey: .audience) {
            audience = [one]
        } else {
            audience = try c.decode([String].self, forKey: .audience)
        }
        issuedAt = Date(timeIntervalSince1970: try c.decode(Double.self, forKey: .issuedAt))
        expiresAt = try c.decodeIfPresent(Double.self, forKey: .expiresAt).map(Date.init(timeIntervalSince1970:))
        subject = try c.decodeIfPresent(String.self, forKey: .subject)
        email = try c.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try Self.flexibleBool(c, .emailVerified)
        isPrivateEmail = try Self.flexibleBool(c, .isPrivateEmail)
        nonceSupported = try Self.flexibleBool(c, .nonceSupported)
        realUserStatus = try c.decodeIfPresent(Int.self, forKey: .realUserStatus)
        nonce = try c.decodeIfPresent(String.self, forKey: .nonce)
        jwtID = try c.decodeIfPresent(String.self, forKey: .jwtID)
        events = try c.decodeIfPresent(String.self, forKey: .events)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(issuer, forKey: .issuer)
        if audience.count == 1 { try c.encode(audience[0], forKey: .audience) } else { try c.encode(audience, forKey: .audience) }
        try c.encode(Int64(issuedAt.timeIntervalSince1970), forKey: .issuedAt)
        try c.encodeIfPresent(expiresAt.map { Int64($0.timeIntervalSince1970) }, forKey: .expiresAt)
        try c.encodeIfPresent(subject, forKey: .subject)
        try c.encodeIfPresent(email, forKey: .email)
        try c.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try c.encodeIfPresent(isPrivateEmail, forKey: .isPrivateEmail)
        try c.encodeIfPresent(realUserStatus, forKey: .realUserStatus)
        try c.encodeIfPresent(nonce, forKey: .nonce)
        try c.encodeIfPresent(nonceSupported, forKey: .nonceSupported)
        try c.encodeIfPresent(jwtID, forKey: .jwtID)
        try c.encodeIfPresent(events, forKey: .events)
    }

    /// Nothing here: the verifier checks each claim itself, to name the one that failed.
    public func verify(using _: some JWTAlgorithm) async throws {}

    /// `true`/`false`, or the strings `"true"`/`"false"` (Apple sends both forms).
    static func flexibleBool(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Bool? {
        guard c.contains(key), try !c.decodeNil(forKey: key) else { return nil }
        if let value = try? c.decode(Bool.self, forKey: key) { return value }
        switch try c.decode(String.self, forKey: key).lowercased() {
        case "true": return true
        case "false": return false
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\(key.rawValue) must be true or false")
        }
    }
}
