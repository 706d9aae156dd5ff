import Foundation
import HeraldAppleCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// `herald-apple`'s handler of `apple.token` and `apple.revoke` (``AppleHandler+Token.swift``,
/// ``AppleHandler+Revoke.swift``). Each job is decided in PostgreSQL first
/// (``AppleStore/prepare(_:client:logger:)``: re-entrancy, one exchange per code) and recorded
/// `calling` before Apple is called, so a redelivery never sends a code twice.
public struct AppleHandler: JobHandler {
    public let configuration: AppleConfiguration
    let chain: ProviderChain<AppleCall, AppleGrant>
    let verifier: AppleIdentityVerifier
    let sealer: SecretSealer
    /// Where a stored token's revocation is enqueued when its account is deleted.
    let jobsExchange: String
    /// `apple.notification` (``AppleNotifications``).
    let notifications: AppleNotifications?
    let metrics = AppleMetrics()

    public init(configuration: AppleConfiguration, api: any DeliveryProvider<AppleCall, AppleGrant>, verifier: AppleIdentityVerifier,
                sealer: SecretSealer, jobsExchange: String, notifications: AppleNotifications? = nil) {
        self.configuration = configuration
        self.chain = ProviderChain(channel: "apple", providers: [api])
        self.verifier = verifier
        self.sealer = sealer
        self.jobsExchange = jobsExchange
        self.notifications = notifications
    }

    /// The handler a `herald-apple` process runs. Stops at start, naming the key, on a
    /// configuration it cannot work with (no team, key id, `.p8` key or token keys; a key that
    /// does not parse). `now` is the client secrets' clock (tests move it).
    public init(configuration: HeraldConfiguration, logger: Logger = Logger(label: "herald.apple"), now: @escaping @Sendable () -> Date = Date.init) throws {
        let apple = configuration.apple
        try apple.tokens.checkWorker(clientIDs: apple.clientIDs)
        let secrets = try AppleClientSecret(pem: apple.tokens.privateKey, keyID: apple.tokens.keyID, teamID: apple.tokens.teamID,
                                            lifetimeSeconds: apple.tokens.clientSecretLifetimeSeconds, now: now)
        let api = AppleAPI(tokenURL: apple.tokens.tokenURL, revokeURL: apple.tokens.revokeURL,
                           http: ProviderHTTP(timeoutMilliseconds: apple.tokens.timeoutMilliseconds), secrets: secrets)
        let verifier = AppleIdentityVerifier(configuration: apple, logger: logger)
        self.init(configuration: apple, api: api, verifier: verifier,
                  sealer: SecretSealer(keyRing: try apple.tokens.tokenKeyRing()),
                  jobsExchange: HeraldTopology(configuration.amqp, configuration.runner).jobsExchange,
                  notifications: try AppleNotifications(configuration: configuration, verifier: verifier))
    }

    public func handle(_ job: AppleJob, context: JobContext) async throws -> JobOutcome {
        if case .notification(let notification) = job {
            // Its client id is the verified JWT's aud, checked by the verifier.
            guard let notifications else { throw JobFailure.invalid("apple.notification is not handled by this worker") }
            return try await notifications.handle(notification, context: context)
        }
        var logger = context.logger
        logger[metadataKey: "account_id"] = "\(job.accountID)"
        logger[metadataKey: "client_id"] = "\(job.clientID)"
        guard configuration.clientIDs.contains(job.clientID) else {
            throw JobFailure.invalid("client_id is not one of apple.client_ids")
        }
        switch job {
        case .token(let token): return try await self.token(token, context: context, logger: logger)
        case .revoke(let revoke): return try await self.revoke(revoke, context: context, logger: logger)
        case .notification: throw JobFailure.invalid("apple.notification reached the token path")
        }
    }

    /// Out of attempts: the job's record ends `failed` with the runner's reason, and
    /// `apple.token.failed` (or `apple.revoke.failed`) tells the front API, with the ledger's `dead`.
    public func exhausted(_ job: AppleJob, reason: String, context: JobContext) -> JobOutcome {
        // A notification has no record of its own before it is verified: the dead letter is it.
        if case .notification = job { return .rejected(reason) }
        let (messageID, accountID, clientID, operation) = (context.envelope.messageID, job.accountID, job.clientID, job.operation)
        let name = operation == .token ? "apple.token.failed" : "apple.revoke.failed"
        return .rejected(reason, events: [event(name, job, reason: reason)]) { connection, logger in
            try await AppleStore.exhausted(messageID, operation: operation, accountID: accountID, clientID: clientID, reason: reason,
                                           on: connection, logger: logger)
        }
    }

    func event(_ name: String, _ job: AppleJob, reason: String? = nil) -> OutgoingEvent {
        OutgoingEvent(name: name, payload: AppleTokenEvent(accountID: job.accountID, clientID: job.clientID, reason: reason))
    }

    /// Writes a call's result until it lands (the call happened: giving up would repeat it).
    func record(_ context: JobContext, _ write: @escaping @Sendable (PostgresClient) async throws -> Void) async throws {
        let database = context.database
        try await context.untilDatabase { try await write(database) }
    }
}

extension AppleJob {
    var accountID: String {
        switch self {
        case .token(let job): job.accountID
        case .revoke(let job): job.accountID
        case .notification: ""
        }
    }

    var clientID: String {
        switch self {
        case .token(let job): job.clientID
        case .revoke(let job): job.clientID
        case .notification: ""
        }
    }

    var operation: AppleOperation {
        switch self {
        case .token: .token
        case .revoke, .notification: .revoke
        }
    }
}

/// Payload of `apple.token.stored`, `apple.token.failed`, `apple.token.revoked` and
/// `apple.revoke.failed`: never a code or token.
struct AppleTokenEvent: Encodable {
    var accountID: String
    var clientID: String
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case reason
        case accountID = "account_id", clientID = "client_id"
    }
}
