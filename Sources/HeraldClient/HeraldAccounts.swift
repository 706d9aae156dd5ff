import HeraldRuntime
import Logging
import PostgresNIO

/// What a Swift front API calls to keep the accounts cleanup judges: create anonymous
/// accounts, link providers (upgrade), record sign-ins, delete accounts. It runs on the caller's running
/// `PostgresClient`; a front API in another language runs the same SQL (docs/architecture.md).
public struct HeraldAccounts: Sendable {
    private let store: AccountStore
    private let topology: HeraldTopology

    /// `topology`: the namespace whose `herald.events` gets `account.deleted` (the default's).
    public init(database: PostgresClient, logger: Logger, topology: HeraldTopology = HeraldTopology()) {
        self.store = AccountStore(client: database, logger: logger)
        self.topology = topology
    }

    /// Firebase's `signInAnonymously`: a new anonymous account. False if the id exists.
    @discardableResult
    public func createAnonymousAccount(id: String) async throws -> Bool {
        try await store.createAnonymousAccount(id: id)
    }

    /// Firebase's `linkWithCredential`: the account is upgraded and never cleaned up. False
    /// when the account no longer exists (cleanup deleted it).
    @discardableResult
    public func linkProvider(accountID: String, provider: String, providerUID: String) async throws -> Bool {
        try await store.linkProvider(accountID: accountID, provider: provider, providerUID: providerUID)
    }

    /// A sign-in of an existing account. False when it no longer exists.
    @discardableResult
    public func recordSignIn(accountID: String) async throws -> Bool {
        try await store.recordSignIn(accountID: accountID)
    }

    /// Deletes the account (the user deleted it), with `account.deleted` on `herald.events`.
    /// In the same transaction, every Sign in with Apple refresh token Herald keeps for it gets
    /// its `apple.revoke` job (through the event outbox; App Store Review Guideline 5.1.1(v)),
    /// so no deletion skips its revocation. False when the account does not exist.
    @discardableResult
    public func deleteAccount(id: String) async throws -> Bool {
        try await store.deleteAccount(id: id, eventsExchange: topology.eventsExchange)
    }

    public func account(_ id: String) async throws -> AccountStore.Account? {
        try await store.account(id)
    }
}
