import Foundation
import Logging
import PostgresNIO

/// The accounts the front API keeps in `herald.accounts`, as far as cleanup needs them:
/// creating anonymous accounts, linking providers (which upgrades an account for good) and
/// recording sign-ins. docs/architecture.md shows the same in plain SQL.
public struct AccountStore: Sendable {
    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One account.
    public struct Account: Sendable, Equatable {
        public var id: String
        public var createdAt: Date
        public var isAnonymous: Bool
        public var lastSignInAt: Date?
        public var disabled: Bool
        public var providers: [String]
        /// When cleanup deletes it (`SQL/queries/account_read.sql`): nil for a linked account,
        /// or while cleanup is off for an account that was given no date.
        public var deletionDate: Date?
        /// Whether that date is kept from before cleanup was switched off (it no longer follows
        /// the policy's enabling time or retention) rather than computed from the policy.
        public var deletionDateKept: Bool
    }

    /// Creates an anonymous account (signed in at once, as Firebase's `signInAnonymously`).
    /// Returns false when the id exists.
    @discardableResult
    public func createAnonymousAccount(id: String) async throws -> Bool {
        try await AccountCreate(id: id, isAnonymous: true).first(on: client, logger: logger) != nil
    }

    /// Creates an account that signed up with a provider (not anonymous; never cleaned up).
    @discardableResult
    public func createAccount(id: String, provider: String, providerUID: String) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let created = try await AccountCreate(id: id, isAnonymous: false).first(on: connection, logger: logger) != nil
            if created {
                try await AccountProviderAdd(accountID: id, provider: provider, providerUID: providerUID).rows(on: connection, logger: logger)
            }
            return created
        }
    }

    /// Links a provider (`google.com`, `apple.com`, `phone`, `password`, …) to an account.
    /// An anonymous account is upgraded: it is no longer anonymous, its deletion date is
    /// removed for good (also a kept one) and cleanup never deletes it. False when the account does not exist (e.g. cleanup deleted it: the front API then
    /// signs the user in as a new account). Throws on a `provider_uid` linked to another account.
    @discardableResult
    public func linkProvider(accountID: String, provider: String, providerUID: String) async throws -> Bool {
        try await AccountProviderLink(accountID: accountID, provider: provider, providerUID: providerUID).first(on: client, logger: logger) != nil
    }

    /// Records a sign-in. False when the account does not exist.
    @discardableResult
    public func recordSignIn(accountID: String) async throws -> Bool {
        try await AccountSignIn(accountID: accountID).first(on: client, logger: logger) != nil
    }

    /// Deletes an account (its provider links go with it) and writes `account.deleted`
    /// (reason `deleted`) to the event outbox for `eventsExchange`, in one transaction. Triggers
    /// on `herald.accounts` add their work to the same transaction (migration 19: the
    /// revocation of the account's Sign in with Apple tokens). False when it does not exist.
    @discardableResult
    public func deleteAccount(id: String, eventsExchange: String) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            try await Self.deleteAccount(id: id, reason: AccountDeletedEvent.deleted, eventsExchange: eventsExchange, on: connection, logger: logger)
        }
    }

    /// The same in the caller's transaction, with the event's `reason` (herald-apple's
    /// `account-delete` notification: `apple_account_deleted`). False when it does not exist
    /// (nothing written, so a repeat emits nothing).
    @discardableResult
    public static func deleteAccount(id: String, reason: String, eventsExchange: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard let row = try await AccountDelete(id: id).first(on: connection, logger: logger) else { return false }
        let event = AccountDeletedEvent(accountID: id, createdAt: row.createdAt, deletedAt: row.deletedAt, runID: nil, reason: reason)
        try await EventOutbox.insert([event.outgoing], exchange: eventsExchange, on: connection, logger: logger)
        return true
    }

    public func account(_ id: String) async throws -> Account? {
        try await AccountRead(id: id).first(on: client, logger: logger).map {
            Account(id: $0.id, createdAt: $0.createdAt, isAnonymous: $0.isAnonymous, lastSignInAt: $0.lastSignInAt, disabled: $0.disabled,
                    providers: $0.providers, deletionDate: $0.deletionDate, deletionDateKept: $0.deletionDateKept)
        }
    }
}
