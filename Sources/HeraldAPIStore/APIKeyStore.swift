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
        let rows = try await client.query("""
            INSERT INTO herald.api_keys (id, name, scopes, key_id, secret_hash, expires_at, asserts_client_ip)
            VALUES (\(id), \(name), \(scopeNames), \(stored.keyID), \(ByteBuffer(bytes: stored.digest)), \(expiresAt), \(assertsClientIP))
            RETURNING created_at
            """, logger: logger)
        var created = Date()
        for try await at in rows.decode(Date.self) { created = at }
        return (APIKey(id: id, name: name, scopes: scopes, createdAt: created, expiresAt: expiresAt, assertsClientIP: assertsClientIP), secret)
    }

    /// Every key, newest first.
    public func list(logger: Logger) async throws -> [APIKey] {
        let rows = try await client.query("""
            SELECT id, name, scopes, created_at, expires_at, revoked_at, last_used_at, asserts_client_ip FROM herald.api_keys ORDER BY created_at DESC, id
            """, logger: logger)
        var keys: [APIKey] = []
        for try await (id, name, scopes, created, expires, revoked, used, server) in rows.decode((String, String, [String], Date, Date?, Date?, Date?, Bool).self) {
            keys.append(APIKey(id: id, name: name, scopes: Set(scopes.compactMap(APIScope.init(rawValue:))), createdAt: created,
                               expiresAt: expires, revokedAt: revoked, lastUsedAt: used, assertsClientIP: server))
        }
        return keys
    }

    /// Revokes the key from now on, and tells every herald-api at its commit (`NOTIFY
    /// herald_api_keys`, the key's id: their caches drop it). False when there is no such key or
    /// it was already revoked.
    public func revoke(id: String, logger: Logger) async throws -> Bool {
        let rows = try await client.query("""
            WITH revoked AS (UPDATE herald.api_keys SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL RETURNING id)
            SELECT id, pg_notify(\(Self.changesChannel), id)::text FROM revoked
            """, logger: logger)
        for try await _ in rows.decode((String, String).self) { return true }
        return false
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
        let rows = try await client.query("""
            SELECT name, scopes, key_id, secret_hash, created_at, expires_at, revoked_at, last_used_at, asserts_client_ip
              FROM herald.api_keys WHERE id = \(id)
            """, logger: logger)
        typealias Row = (String, [String], String, ByteBuffer, Date, Date?, Date?, Date?, Bool)
        for try await row in rows.decode(Row.self) {
            let key = APIKey(id: id, name: row.0, scopes: Set(row.1.compactMap(APIScope.init(rawValue:))), createdAt: row.4,
                             expiresAt: row.5, revokedAt: row.6, lastUsedAt: row.7, assertsClientIP: row.8)
            return Stored(key: key, hash: StoredSecretHash(keyID: row.2, digest: Array(buffer: row.3)))
        }
        return nil
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
        try await client.query("UPDATE herald.api_keys SET last_used_at = now() WHERE id = \(id)", logger: logger)
    }
}
