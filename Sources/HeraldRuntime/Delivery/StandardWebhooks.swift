import Crypto
import Foundation

/// Standard Webhooks' signature (standardwebhooks.com): headers `webhook-id`,
/// `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>`,
/// several separated by spaces while a key rotates) over `id.timestamp.body`, keyed with the
/// bytes of a `whsec_<base64>` secret. Herald signs its webhook provider's requests with it and
/// checks the receipts that provider sends back the same way.
public enum StandardWebhooks {
    /// How far a `webhook-timestamp` may be from now, either way (the specification's 5 minutes):
    /// an older request is a replay.
    public static let tolerance: TimeInterval = 300

    /// The key of a `whsec_…` secret (the prefix is optional); nil when it is not the base64 of
    /// at least 24 bytes.
    public static func key(secret: String) -> [UInt8]? {
        let encoded = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
        guard let bytes = Data(base64Encoded: encoded), bytes.count >= 24 else { return nil }
        return Array(bytes)
    }

    /// `v1,` and the signature of `id.timestamp.body`.
    public static func signature(id: String, timestamp: Int, body: [UInt8], key: [UInt8]) -> String {
        "v1," + Data(mac(id: id, timestamp: timestamp, body: body, key: key)).base64EncodedString()
    }

    /// Why a request's signature does not hold.
    public enum Refusal: String, Error, Sendable {
        /// A header is missing or its timestamp is not a number.
        case unsigned
        /// The timestamp is further than ``tolerance`` from now.
        case stale
        /// No `v1` signature in the header matches.
        case forged
    }

    /// Checks a request's headers against its body: nothing thrown when one of the header's
    /// `v1` signatures is the body's (compared in constant time) and the timestamp is recent.
    public static func verify(id: String?, timestamp: String?, signatures: String?, body: [UInt8], key: [UInt8],
                              now: Date = Date()) throws(Refusal) {
        guard let id, !id.isEmpty, let signatures, let timestamp, let seconds = Int(timestamp) else { throw .unsigned }
        guard abs(now.timeIntervalSince1970 - TimeInterval(seconds)) <= tolerance else { throw .stale }
        let signed = signedBytes(id: id, timestamp: seconds, body: body)
        let symmetric = SymmetricKey(data: key)
        for candidate in signatures.split(separator: " ") where candidate.hasPrefix("v1,") {
            guard let given = Data(base64Encoded: String(candidate.dropFirst(3))) else { continue }
            if HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: signed, using: symmetric) { return }
        }
        throw .forged
    }

    private static func mac(id: String, timestamp: Int, body: [UInt8], key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: signedBytes(id: id, timestamp: timestamp, body: body), using: SymmetricKey(data: key)))
    }

    /// What is signed: `id.timestamp.` and the body.
    private static func signedBytes(id: String, timestamp: Int, body: [UInt8]) -> [UInt8] {
        Array("\(id).\(timestamp).".utf8) + body
    }
}
