import Foundation
import Logging
import PostgresNIO

/// Apple's private email relay (`…@privaterelay.appleid.com`): whether Apple forwards mail to
/// an address. `herald-apple` writes it from Apple's `email-disabled` / `email-enabled`
/// notifications; `herald-email` reads it before sending. It lives in the runtime because two
/// channels share it (a channel never imports another), like the accounts.
///
/// Addresses are personal data and the table outlives any request, so only a keyed hash is
/// stored (HMAC-SHA256 under ``KeyRing``, context ``hashContext``), never the address: the
/// email worker, which has the address, finds the row by its hash under every key of the ring.
/// A plain SHA-256 would be cheaper but reversible: a relay local part is about ten random
/// letters and digits, which a GPU enumerates in days. After a key leaves the ring, markings
/// made under it no longer match (mail then goes out and Apple drops it): keep old keys while
/// markings made under them matter.
public struct PrivateRelayAddresses: Sendable {
    /// The relay's domain.
    public static let domain = "privaterelay.appleid.com"
    /// The context every address is hashed under (``SecretHasher``).
    public static let hashContext = "apple_relay"

    public let hasher: SecretHasher

    public init(hasher: SecretHasher) { self.hasher = hasher }

    /// Whether `address` is an address of Apple's private relay (the domain, case-insensitively).
    public static func isRelay(_ address: String) -> Bool {
        guard let at = address.lastIndex(of: "@") else { return false }
        return address[address.index(after: at)...].trimmingCharacters(in: .whitespaces).lowercased() == domain
    }

    /// The form an address is hashed in: trimmed and lower-cased (relay addresses are
    /// case-insensitive; Apple hands them out in lower case).
    static func normalForm(_ address: String) -> Secret {
        Secret(address.trimmingCharacters(in: .whitespacesAndNewlines).lowercased())
    }

    /// True when the newest marking of `address` says Apple does not forward to it.
    public func isUndeliverable(_ address: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        let digests = hasher.hashesUnderEveryKey(Self.normalForm(address), context: Self.hashContext).map { $0.digest }
        return try await RelayAddressUndeliverable(hashes: digests).first(on: client, logger: logger)?.undeliverable ?? false
    }

    /// Records that Apple stopped (`deliverable` false) or resumed forwarding to `address` as
    /// of `eventTime` (the notification's `event_time`), in the caller's transaction. A marking
    /// older than the one stored changes nothing, so notifications handled out of order end in
    /// the newest state; a marking under an older key is replaced by one under the active key.
    /// Returns whether the stored state changed.
    @discardableResult
    public func mark(_ address: String, deliverable: Bool, eventTime: Date, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let hashes = hasher.hashesUnderEveryKey(Self.normalForm(address), context: Self.hashContext)
        let active = hashes[0]
        return try await RelayAddressMark(others: hashes.dropFirst().map(\.digest), active: active.digest, eventTime: eventTime,
                                          keyID: active.keyID, deliverable: deliverable).first(on: connection, logger: logger) != nil
    }
}
