import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// API keys in `herald.api_keys`: made with a random secret shown once, kept as its HMAC under
/// the key ring, checked in constant time, revoked or expired by a date.
public struct APIKeyStore: Sendable {
    /// What a presented key turned out to be.
    public enum Check: Sendable, Equatable {
        case valid(APIKey)
        /// No such key, a wrong secret, a revoked or an expired key: all answered alike (401).
        case refused(Refusal)
    }

    public enum Refusal: String, Sendable { case unknown, wrongSecret = "wrong_secret", revoked, expired }

    public let client: PostgresClient
    public let hasher: SecretHasher

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    static func context(_ id: String) -> String { "api-key:\(id)" }

    /// A new key: its record and its secret, which is never shown again.
    public func create(name: String, scopes: Set<APIScope>, expiresAt: Date?, assertsClientIP: Bool = false, logger: Logger) async throws -> (APIKey, Secret) {
        guard (1...100).contains(name.count) else { throw APIKeyError.invalid("name must be 1 to 100 characters") }
        guard !scopes.isEmpty else { throw APIKeyError.invalid("scopes must name at least one scope") }
        let id = "HK" + RandomID.hex()
        let secret = SecretGenerator.token(bytes: 32)
        let stored = hasher.hash(secret, context: Self.context(id))
        let scopeNames = scopes.sorted().map(\.rawValue)
        let insert = APIKeyInsert(id: id, keyName: name, scopes: scopeNames, keyID: stored.keyID, secretHash: stored.digest,
                                  expiresAt: expiresAt, assertsClientIP: assertsClientIP)
        guard let created = try await insert.first(on: client, logger: logger)?.createdAt else { throw StoreError("api key \(id) not returned by its insert") }
        return (APIKey(id: id, name: name, scopes: scopes, createdAt: created, expiresAt: expiresAt, assertsClientIP: assertsClientIP), secret)
    }

    /// Every key, newest first.
    public func list(logger: Logger) async throws -> [APIKey] {
        try await APIKeysList().rows(on: client, logger: logger).map { row in
            APIKey(id: row.id, name: row.keyName, scopes: Set(row.scopes.compactMap(APIScope.init(rawValue:))), createdAt: row.createdAt,
                   expiresAt: row.expiresAt, revokedAt: row.revokedAt, lastUsedAt: row.lastUsedAt, assertsClientIP: row.assertsClientIP)
        }
    }

    /// Revokes the key from now on, and tells every herald-api at its commit (`NOTIFY
    /// herald_api_keys`, the key's id: their caches drop it). False when there is no such key or
    /// it was already revoked.
    public func revoke(id: String, logger: Logger) async throws -> Bool {
        try await APIKeyRevoke(id: id, channel: Self.changesChannel).first(on: client, logger: logger) != nil
    }

    /// The channel a key's revocation is announced on (its payload: the key's id).
    public static let changesChannel = "herald_api_keys"

    /// A key as its row holds it: what ``judge(_:id:secret:now:)`` needs, kept by herald-api
    /// (its key cache reads, judges and touches a key through the three calls below).
    public struct Stored: Sendable {
        public var key: APIKey
        var hash: StoredSecretHash
    }

    /// The row of key `id`, nil when there is none (or the id cannot be one).
    public func stored(id: String, logger: Logger) async throws -> Stored? {
        guard id.utf8.count == 34, id.hasPrefix("HK") else { return nil }
        guard let row = try await APIKeyStored(id: id).first(on: client, logger: logger) else { return nil }
        let key = APIKey(id: id, name: row.keyName, scopes: Set(row.scopes.compactMap(APIScope.init(rawValue:))), createdAt: row.createdAt,
                         expiresAt: row.expiresAt, revokedAt: row.revokedAt, lastUsedAt: row.lastUsedAt, assertsClientIP: row.assertsClientIP)
        return Stored(key: key, hash: StoredSecretHash(keyID: row.keyID, digest: row.secretHash))
    }

    /// Judges a presented secret against key `id`'s row (nil: none). Constant time in the secret;
    /// an unknown id costs an HMAC too, so the answer's timing does not tell which ids exist.
    public func judge(_ stored: Stored?, id: String, secret: Secret, now: Date = Date()) -> Check {
        guard let stored else {
            _ = hasher.hash(secret, context: Self.context(id))
            return .refused(.unknown)
        }
        guard hasher.verify(secret, context: Self.context(id), against: stored.hash) else { return .refused(.wrongSecret) }
        if let revoked = stored.key.revokedAt, revoked <= now { return .refused(.revoked) }
        if let expires = stored.key.expiresAt, expires <= now { return .refused(.expired) }
        return .valid(stored.key)
    }

    /// Notes that key `id` was used now (`last_used_at`).
    public func touch(id: String, logger: Logger) async throws {
        try await APIKeyTouch(id: id).rows(on: client, logger: logger)
    }
}
