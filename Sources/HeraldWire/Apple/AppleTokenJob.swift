import Foundation
import HeraldRuntime

/// `apple.token` v1: exchange the authorization code of a Sign in with Apple for the user's
/// refresh token and keep it (encrypted) so the account's deletion can revoke it. The front
/// API enqueues it right after a sign-in whose identity token it verified.
public struct AppleTokenJob: HeraldJob, Equatable {
    public static let kind = JobKind.apple
    public static let name = "apple.token"
    public static let version = 1

    public var version: Int
    /// The account the Apple identity is linked to (`herald.account_providers`, `apple.com`).
    public var accountID: String
    /// The bundle id or services id the code was issued to (one of `apple.client_ids`).
    public var clientID: String
    /// Single use, valid five minutes. A secret: never logged, stored only as its SHA-256.
    public var authorizationCode: Secret

    public init(accountID: String, clientID: String, authorizationCode: String) {
        self.version = Self.version
        self.accountID = accountID
        self.clientID = clientID
        self.authorizationCode = Secret(authorizationCode)
    }

    enum CodingKeys: String, CodingKey {
        case version
        case accountID = "account_id", clientID = "client_id", authorizationCode = "authorization_code"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        accountID = try c.decode(String.self, forKey: .accountID)
        clientID = try c.decode(String.self, forKey: .clientID)
        authorizationCode = Secret(try c.decode(String.self, forKey: .authorizationCode))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(accountID, forKey: .accountID)
        try c.encode(clientID, forKey: .clientID)
        try c.encode(authorizationCode.revealed, forKey: .authorizationCode)
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(accountID, field: "account_id")
        try WireRules.identifier(clientID, field: "client_id")
        try AppleAuthorizationCode.validate(authorizationCode, field: "authorization_code")
    }
}

/// The form of an authorization code (Apple's are opaque printable strings of ~64 bytes).
enum AppleAuthorizationCode {
    static func validate(_ code: Secret, field: String) throws(JobValidationError) {
        guard (1...1024).contains(code.revealed.utf8.count),
              code.revealed.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw JobValidationError("\(field) must be 1 to 1024 printable ASCII characters without spaces")
        }
    }
}
