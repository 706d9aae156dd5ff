import Logging
import PostgresNIO

/// A worker's own logic: given a validated job, perform its side effect and say how it went.
/// Everything else (decoding, idempotency, retries, dead letters, acks, events) is the runner's.
public protocol JobHandler: Sendable {
    associatedtype Job: HeraldJob
    func handle(_ job: Job, context: JobContext) async throws -> JobOutcome
    /// Called once when the job is dead-lettered after `runner.max_attempts` (transient
    /// failures each time, or a worker that stopped each time): the outcome's `write` and
    /// `events` commit atomically with the ledger's `dead` record, so the channel's own
    /// rows end in a true state (`failed`, its code dead) instead of `retrying` for ever.
    /// `reason` is the dead letter's. Its `status` and `reason` are not used (the ledger
    /// says `dead`). A `write` that throws (nothing of this job left to end) takes its events
    /// with it: the ledger alone records `dead`. The default leaves the channel's rows alone.
    func exhausted(_ job: Job, reason: String, context: JobContext) -> JobOutcome
    /// True for a handler whose runs take long by design (a cleanup run): the runner does not
    /// hold it to `runner.handler_timeout_seconds`.
    static var runsLong: Bool { get }
    /// The waits (seconds) of the jobs this handler schedules for later through its kind's wait
    /// queues (``HeraldTopology/waitQueue(_:seconds:)``): its worker declares one queue for each.
    var waitSeconds: [Int] { get }
}

extension JobHandler {
    public static var runsLong: Bool { false }

    public var waitSeconds: [Int] { [] }

    public func exhausted(_ job: Job, reason: String, context: JobContext) -> JobOutcome {
        .rejected(reason)
    }
}

/// What a handler knows about the delivery it is handling.
public struct JobContext: Sendable {
    public var envelope: JobEnvelope
    /// Claims of this message so far, this one included (1 on the first try).
    public var attempt: Int
    /// True when this message may have been handled before (a retry or a redelivery):
    /// a handler with an external side effect checks its own records first.
    public var mayBeRepeat: Bool
    /// Carries `message_id` and `correlation_id` as metadata.
    public var logger: Logger
    public var database: PostgresClient
    /// This worker's presence key (its advisory lock is held while the worker lives): a
    /// handler records it where another worker must tell "in progress" from "crashed".
    public var ownerKey: Int64 = 0
    /// How this worker waits out a database outage.
    public var hold = DatabaseHold()
    /// Answers the request waiting for this job's decision, if one waits (``decided(_:)``).
    public var answer: DecisionAnswer?

    public init(envelope: JobEnvelope, attempt: Int, mayBeRepeat: Bool, logger: Logger, database: PostgresClient,
                ownerKey: Int64 = 0, hold: DatabaseHold = DatabaseHold(), answer: DecisionAnswer? = nil) {
        self.envelope = envelope
        self.attempt = attempt
        self.mayBeRepeat = mayBeRepeat
        self.logger = logger
        self.database = database
        self.ownerKey = ownerKey
        self.hold = hold
        self.answer = answer
    }

    /// Tells the waiting request what was decided, once the decision is committed (a handler's
    /// `sending`, before its provider call). The runner answers any other outcome after its commit.
    public func decided(_ decision: JobDecision) {
        answer?.answer(decision, logger: logger)
    }

    /// Runs a database write until it lands, waiting out an unreachable database: for the
    /// record of a side effect that already happened (giving up would make the redelivery
    /// do it again, and a handler run again at once would skip the delay queue).
    ///
    /// The handler's cancellation (the runner's drain timeout) does not cut the first try,
    /// which runs in a task of its own within `database.operation_timeout_seconds`: the side
    /// effect has happened, and its record is what keeps the requeued job from repeating it.
    /// It ends only the waiting out of an outage after that try.
    public func untilDatabase<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = hold.operationTimeout
        do {
            let result = try await Task { try await withDeadline(timeout, operation) }.value
            hold.report(true)
            return result
        } catch where DatabaseAvailability.isUnavailable(error) {
            return try await hold.run(logger, operation)
        }
    }
}

/// How a job ended. Throw ``JobFailure`` instead for "try again later" or "bad input".
public struct JobOutcome: Sendable {
    public enum Status: String, Sendable { case completed, rejected }

    /// The ledger's status for this outcome.
    public var ledgerStatus: JobStatus { status == .completed ? .completed : .rejected }

    public var status: Status
    /// Why it was rejected (safe to store and log: no secrets, no personal data).
    public var reason: String?
    public var events: [OutgoingEvent]
    /// Database writes that must commit atomically with the outcome (in a shared transaction).
    public var write: (@Sendable (PostgresConnection, Logger) async throws -> Void)?
    /// What the waiting request is answered once this outcome is committed (unless the handler
    /// answered already). Nil: a rejection answers `refused` with its reason; a completion nothing.
    public var decision: JobDecision?

    /// The side effect happened.
    public static func completed(events: [OutgoingEvent] = [], write: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil) -> JobOutcome {
        JobOutcome(status: .completed, reason: nil, events: events, write: write)
    }

    /// This outcome, answering `decision` to the waiting request once it is committed.
    public func answering(_ decision: JobDecision) -> JobOutcome {
        var outcome = self
        outcome.decision = decision
        return outcome
    }

    /// A permanent refusal (provider 4xx, policy): recorded, acked, not retried.
    public static func rejected(_ reason: String, events: [OutgoingEvent] = [], write: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil) -> JobOutcome {
        JobOutcome(status: .rejected, reason: reason, events: events, write: write)
    }
}

/// Thrown by a handler.
public enum JobFailure: Error, Sendable, Equatable {
    /// Try again later through the delay queues (provider 5xx, timeout); dead-letter after the last try.
    case transient(String)
    /// The job can never succeed as it is: dead-letter at once with this reason.
    case invalid(String)
}
