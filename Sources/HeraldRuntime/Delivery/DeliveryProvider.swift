import Logging
import PostgresNIO

/// What a provider call may use besides the message: the job's logger (message and
/// correlation ids, the provider's name) and the worker's database (the dev outbox records there).
public struct DeliveryContext: Sendable {
    public var logger: Logger
    public var database: PostgresClient

    public init(logger: Logger, database: PostgresClient) {
        self.logger = logger
        self.database = database
    }
}

/// A way to deliver a channel's message: an SMS gateway, a mail server, APNs, the dev outbox.
/// Implementations never log or return the secret the message carries.
public protocol DeliveryProvider<Message, Detail>: Sendable {
    associatedtype Message: Sendable
    associatedtype Detail: Sendable & Equatable = NoDetail
    /// `twilio`, `smtp`, `apns`, `outbox`, …: the `provider` label of the metrics and the
    /// `provider` column of the attempt records.
    var name: String { get }
    func send(_ message: Message, context: DeliveryContext) async -> ProviderAnswer<Detail>
}
