/// Why a JWT signed by Apple (an identity token, a server-to-server notification) was
/// refused. The description names the check that failed, never the token or its claims.
public enum AppleTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The RS256 signature does not verify with the key the header names.
    case badSignature
    /// The header's `kid` is not in Apple's key set, even after fetching it again (or the
    /// fetch was not due yet: see `apple.jwks_refetch_interval_seconds`).
    case unknownKey
    /// `iss` is not `https://appleid.apple.com`.
    case wrongIssuer
    /// `aud` is none of `apple.client_ids`.
    case wrongAudience
    /// `exp` has passed (beyond the leeway).
    case expired
    /// `iat` lies in the future (beyond the leeway).
    case issuedInFuture
    /// `iat` is older than the caller allows (a notification replayed late).
    case stale
    /// The token's `nonce` is not SHA-256 of the raw nonce the caller gave, or is missing.
    case nonceMismatch
    /// Not a JWT Herald can read; `reason` names the part (never its content).
    case malformed(String)
    /// Apple's key set could not be fetched and none is cached; `reason` says why.
    case keysUnavailable(String)

    /// A short, stable code for logs, metrics, dead-letter reasons and API answers.
    public var code: String {
        switch self {
        case .badSignature: "bad_signature"
        case .unknownKey: "unknown_key"
        case .wrongIssuer: "wrong_issuer"
        case .wrongAudience: "wrong_audience"
        case .expired: "expired"
        case .issuedInFuture: "issued_in_future"
        case .stale: "stale"
        case .nonceMismatch: "nonce_mismatch"
        case .malformed: "malformed"
        case .keysUnavailable: "keys_unavailable"
        }
    }

    public var description: String {
        switch self {
        case .malformed(let reason): "apple token malformed: \(reason)"
        case .keysUnavailable(let reason): "apple key set unavailable: \(reason)"
        default: "apple token refused: \(code)"
        }
    }
}
