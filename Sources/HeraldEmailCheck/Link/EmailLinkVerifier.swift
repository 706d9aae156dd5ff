import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// The consume API of email actions: is `oobCode` a live code sent to `email`? Atomic (the
/// code's row is locked while it is judged: of concurrent consumes of one code exactly one
/// succeeds), single use, expiry per mode, and only for the address the link was sent to
/// (compared in ``EmailAddress/normalize(_:)`` form: the domain case-insensitively). Using a
/// code supersedes every other pending code of its (address, mode); using a
/// `verify_and_change_email` code enqueues the `recover_email` notice to the old address in
/// the same transaction (`herald.email_use_code`).
public struct EmailLinkVerifier: Sendable {
    public enum Result: Sendable, Equatable {
        /// The code was live and is now used. `settings` are the approved action code settings.
        case success(email: String, mode: EmailActionJob.Mode, continueURL: String, settings: Settings)
        /// A `recover_email` code was live and is now used: restore `email` (the old address,
        /// where the notice went) on the account whose address is now `changedTo`.
        case recovered(email: String, changedTo: String, continueURL: String, settings: Settings)
        /// The code exists but was sent to another address (the code stays usable).
        case emailMismatch
        case expired
        case alreadyUsed
        /// Replaced: another link of the same address and mode was used, a later try of the
        /// request sent a new one, or (reset_password) a newer request was made. Ask for a new link.
        case superseded
        /// No such code, a code of another mode, or one whose send failed.
        case notFound
    }

    /// The context every link code is hashed under (herald-email hashes, this verifies): the
    /// code alone finds its row, and the row then says which email and mode it belongs to.
    public static let hashContext = "email-link"

    /// The settings the link was made with, as the app needs them after sign-in.
    public struct Settings: Sendable, Equatable, Decodable {
        public var url: String
        public var linkDomain: String
        public var handleCodeInApp: Bool
        public var iosBundleID: String?
        public var androidPackageName: String?
        public var androidInstallApp: Bool?
        public var androidMinimumVersion: String?

        enum CodingKeys: String, CodingKey {
            case url
            case linkDomain = "link_domain", handleCodeInApp = "handle_code_in_app", iosBundleID = "ios_bundle_id"
            case androidPackageName = "android_package_name", androidInstallApp = "android_install_app"
            case androidMinimumVersion = "android_minimum_version"
        }
    }

    public let client: PostgresClient
    public let hasher: SecretHasher

    public init(client: PostgresClient, hasher: SecretHasher) {
        self.client = client
        self.hasher = hasher
    }

    /// Consumes a code of `mode` (nil: any mode).
    public func consume(email: String, oobCode: String, mode: EmailActionJob.Mode?, logger: Logger) async throws -> Result {
        let code = Secret(oobCode)
        guard (16...256).contains(oobCode.utf8.count) else { return .notFound }
        let candidates = hasher.hashesUnderEveryKey(code, context: Self.hashContext)
        let find = LinkCodesFind(digests: candidates.map { Hex.lower($0.digest) })
        let normal = EmailAddress.normalize(email)
        // Two links of one (address, mode) used at once lock each other's rows (each supersedes
        // the other): PostgreSQL aborts one as a deadlock, and its retry finds its code superseded.
        return try await Database.retryingConflicts { try await client.withTransaction(logger: logger) { connection in
            var found: LinkCodesFind.Row?
            for row in try await find.rows(on: connection, logger: logger) {
                // The digest matched by index; confirm under its own key, in constant time.
                if hasher.verify(code, context: Self.hashContext, against: StoredSecretHash(keyID: row.keyID, digest: row.codeHash)) {
                    found = row
                }
            }
            guard let found, let codeMode = EmailActionJob.Mode(rawValue: found.mode), mode == nil || mode == codeMode else { return .notFound }
            let address = found.email
            guard address == normal else { return .emailMismatch }
            switch EmailCodeStatus(rawValue: found.status) {
            case .used: return .alreadyUsed
            case .expired: return .expired
            case .superseded: return .superseded
            case .pending: break
            case .failed, nil: return .notFound
            }
            if found.expired {
                try await LinkCodeExpire(id: found.id).rows(on: connection, logger: logger)
                return .expired
            }
            guard let settings = try? JSONDecoder().decode(Settings.self, from: Data(found.settings.utf8)) else {
                throw StoreError("stored settings of an email code are unreadable")
            }
            let paired = try await LinkCodeUse(id: found.id).first(on: connection, logger: logger)?.pairedEmail
            if codeMode == .recoverEmail {
                guard let paired else { throw StoreError("a recover_email request has no changed address") }
                return .recovered(email: address, changedTo: paired, continueURL: settings.url, settings: settings)
            }
            return .success(email: address, mode: codeMode, continueURL: settings.url, settings: settings)
        } }
    }
}
