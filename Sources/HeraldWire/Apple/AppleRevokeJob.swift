import Foundation
import HeraldRuntime

/// `apple.revoke` v1: revoke the refresh token kept for an account and client id at Apple and
/// delete it (Apple's requirement when the user deletes the account). Herald enqueues it itself
/// when an account with stored tokens is deleted (`herald.accounts`' delete trigger, through the
/// event outbox); a front API may too. When nothing is stored (the `apple.token` job never
/// ran or failed), a fresh `authorization_code` of the user's sign-in is exchanged first and
/// the token it yields revoked.
public struct AppleRevokeJob: HeraldJob, Equatable {
    public static let kind = JobKind.apple
    public static let name = "apple.revoke"
    public static let version = 1

    public var version: Int
    public var accountID: String
    public var clientID: String
    public var authorizationCode: Secret?

    public init(accountID: String, clientID: String, authorizationCode: String? = nil) {
        self.version = Self.version
        self.accountID = accountID
        self.clientID = clientID
        self.authorizationCode = authorizationCode.map(Secret.init)
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
        authorizationCode = try c.decodeIfPresent(String.self, forKey: .authorizationCode).map(Secret.init)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(accountID, forKey: .accountID)
        try c.encode(clientID, forKey: .clientID)
        try c.encodeIfPresent(authorizationCode?.revealed, forKey: .authorizationCode)
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(accountID, field: "account_id")
        try WireRules.identifier(clientID, field: "client_id")
        if let authorizationCode { try AppleAuthorizationCode.validate(authorizationCode, field: "authorization_code") }
    }
}
