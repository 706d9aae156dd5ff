import Foundation

/// A verified Sign in with Apple identity token: who signed in, for which client id.
public struct AppleIdentity: Sendable, Equatable {
    /// Apple's `real_user_status`.
    public enum RealUserStatus: Int, Sendable {
        case unsupported = 0, unknown = 1, likelyReal = 2
    }

    /// `sub`: the user's stable identifier for the team (the account's Apple identity).
    public var subject: String
    /// `aud`: the client id (bundle id or services id) the token was issued to.
    public var clientID: String
    /// Absent when the user shares no email (Apple sends it on the first sign-in).
    public var email: String?
    public var emailVerified: Bool?
    /// True for a `…@privaterelay.appleid.com` address.
    public var isPrivateEmail: Bool?
    public var realUserStatus: RealUserStatus?
    public var issuedAt: Date
    public var expiresAt: Date
}
