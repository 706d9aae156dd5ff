import Foundation

/// The route families an API key may call. A key holds one or more.
public enum APIScope: String, Sendable, CaseIterable, Codable, Comparable {
    /// `/v1/sms/...`: start, check and read SMS verifications.
    case sms
    /// `/v1/email/...`: send email actions, consume their link codes.
    case email
    /// `/v1/push/...`: app verification by silent push, device tokens.
    case push
    /// `/v1/apple/...`: Sign in with Apple's identity tokens and authorization codes.
    case apple
    /// `/v1/accounts/...`: account deletion (with `account.deleted` and Apple revocations).
    case accounts
    /// `/v2/...`: the Twilio Verify v2 compatible routes.
    case verify

    public static func < (a: APIScope, b: APIScope) -> Bool { a.rawValue < b.rawValue }

    /// `sms,verify` → the scopes; throws naming the first unknown one.
    public static func parse(_ text: String) throws(APIKeyError) -> Set<APIScope> {
        var scopes = Set<APIScope>()
        for part in text.split(separator: ",") {
            let name = part.trimmingCharacters(in: .whitespaces)
            if name == "all" { return Set(allCases) }
            guard let scope = APIScope(rawValue: name) else { throw .invalid("unknown scope '\(name)' (one of \(allCases.map(\.rawValue).joined(separator: ", ")), or all)") }
            scopes.insert(scope)
        }
        guard !scopes.isEmpty else { throw .invalid("scopes must name at least one scope") }
        return scopes
    }
}

/// An API key as stored (never its secret).
public struct APIKey: Sendable, Equatable {
    /// `HK` and 32 hex digits: the user name of HTTP Basic auth, the first half of a Bearer token.
    public var id: String
    public var name: String
    public var scopes: Set<APIScope>
    public var createdAt: Date
    public var expiresAt: Date?
    public var revokedAt: Date?
    public var lastUsedAt: Date?
    /// A server key (`heraldctl api-keys create --asserts-client-ip`): the front API's own server
    /// calls with it and names the end user's address (`client_ip`, `DeviceIp`); the peer's
    /// address is never counted in a per-IP limit for it.
    public var assertsClientIP = false

    public func allows(_ scope: APIScope) -> Bool { scopes.contains(scope) }
}

/// Why a key operation was refused.
public enum APIKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(String)
    public var description: String {
        switch self { case .invalid(let reason): reason }
    }
}
