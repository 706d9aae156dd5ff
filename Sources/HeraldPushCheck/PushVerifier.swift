import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// The confirm API of app verification: is `secret` the one pushed for `receipt`? Single use
/// (the row is locked while it is judged and marked used in the same transaction), constant
/// time in the secret (HMAC's `isValidAuthenticationCode`), and void after expiry.
public struct PushVerifier: Sendable {
    public enum Result: Sendable, Equatable {
        /// The push reached the genuine app: `appID` and `platform` of the job.
        case verified(appID: String, platform: PushVerificationJob.Platform)
        /// Not the secret pushed for this receipt (it stays valid until it expires).
        case mismatch
        case expired
        /// Already confirmed once.
        case alreadyUsed
        /// No such receipt, or its push was refused or failed.
        case notFound
    }

    public let client: PostgresClient
    public let hasher: SecretHasher

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    /// What a secret's hash is bound to: the same secret for another receipt is worthless.
    public static func hashContext(receipt: String) -> String { "push:\(receipt)" }

    public func confirm(receipt: String, secret: String, logger: Logger) async throws -> Result {
        let secret = Secret(secret)
        return try await client.withTransaction(logger: logger) { connection in
            guard let found = try await ReceiptLock(receipt: receipt).first(on: connection, logger: logger) else { return .notFound }
            let (state, status) = (found.state, found.secretStatus)
            // `sending`: the app may answer before the worker has recorded the provider's acceptance.
            guard state == .sent || state == .sending || status == .verified else { return .notFound }
            switch status {
            case .verified: return .alreadyUsed
            case .expired: return .expired
            case .pending: break
            case .void: return .notFound
            }
            guard let keyID = found.keyID, let digest = found.secretHash else { return .notFound }
            if found.expired {
                try await ReceiptSecretExpired(receipt: receipt).rows(on: connection, logger: logger)
                return .expired
            }
            let stored = StoredSecretHash(keyID: keyID, digest: digest)
            guard hasher.verify(secret, context: Self.hashContext(receipt: receipt), against: stored) else { return .mismatch }
            try await ReceiptSecretVerified(receipt: receipt).rows(on: connection, logger: logger)
            return .verified(appID: found.appID, platform: PushVerificationJob.Platform(rawValue: found.platform) ?? .apns)
        }
    }
}
