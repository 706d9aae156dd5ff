import Foundation

/// One provider call, as every channel records it (`herald.<channel>_send_attempts`).
public struct DeliveryAttempt: Sendable, Equatable {
    /// The `result` column: `timeout` is a failed call that may have delivered (uncertain).
    public enum Result: String, StoredState { case accepted, rejected, transient, timeout }

    public var provider: String
    public var result: Result
    public var httpStatus: Int?
    public var errorCode: String?
    public var providerMessageID: String?
    public var durationMilliseconds: Int
    /// What the provider's receipts said of the message since (channels that take receipts).
    public var delivery: Delivery?

    /// The furthest status a receipt gave, when it happened, and the provider's error code.
    public struct Delivery: Sendable, Equatable {
        public var status: DeliveryStatus
        public var at: Date
        public var errorCode: String?
        public init(status: DeliveryStatus, at: Date, errorCode: String? = nil) {
            self.status = status
            self.at = at
            self.errorCode = errorCode
        }
    }

    public init(provider: String, result: Result, httpStatus: Int? = nil, errorCode: String? = nil,
                providerMessageID: String? = nil, durationMilliseconds: Int) {
        self.provider = provider
        self.result = result
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.providerMessageID = providerMessageID
        self.durationMilliseconds = durationMilliseconds
    }

    /// A call that may have reached the recipient though it failed: a later send of the same
    /// job is then an uncertain one (counted, never hidden).
    public var uncertain: Bool { result == .timeout }
}

extension Collection where Element == DeliveryAttempt {
    /// What a send adds to a record's `uncertain_sends`: 1 when one of its calls may have
    /// delivered (it failed without saying so), else 0.
    public var uncertainSends: Int { contains(where: \.uncertain) ? 1 : 0 }
}

extension Collection where Element == DeliveryAttempt {
    // The calls as a statement's arrays (`unnest` of a statement that writes them with the change
    // they explain, `SQL/queries/`): -1 for no HTTP status, '' for no error code or message id.

    /// Each call's provider.
    public var providers: [String] { map(\.provider) }
    /// Each call's `result`.
    public var results: [String] { map(\.result.rawValue) }
    /// Each call's HTTP status, -1 for none.
    public var httpStatuses: [Int] { map { $0.httpStatus ?? -1 } }
    /// Each call's error code, '' for none.
    public var errorCodes: [String] { map { $0.errorCode ?? "" } }
    /// Each call's provider message id, '' for none.
    public var providerMessageIDs: [String] { map { $0.providerMessageID ?? "" } }
    /// Each call's duration, in milliseconds.
    public var durations: [Int] { map(\.durationMilliseconds) }
}
