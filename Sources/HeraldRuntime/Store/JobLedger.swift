import Logging
import PostgresNIO

/// The idempotency ledger: one `herald.job_runs` row per `message_id`.
///
/// A job is claimed before its side effect. A claim succeeds for a new message, for one
/// waiting for a retry, and for one whose claimant is gone: its lease ended, or its worker
/// process no longer holds its presence lock (see ``WorkerPresence``), which is how a job
/// whose worker was SIGKILLed is taken over at once instead of after the lease.
public struct JobLedger: Sendable {
    public enum Claim: Sendable, Equatable {
        /// Run it; `attempt` counts claims of this message, this one included.
        /// `tookOver`: the previous claimant died (or its lease ended) mid-job, so its side
        /// effect may already have happened.
        case claimed(attempt: Int, tookOver: Bool)
        /// Its outcome is already committed: ack without running it again.
        case finished(status: JobStatus)
        /// A live worker is running it right now (a duplicate publish): look again later.
        case busy
    }

    /// A finished job, for ``OutcomeCommitter``.
    public struct Finished: Sendable {
        public var messageID: String
        /// `completed`, `rejected` or `dead`.
        public var status: JobStatus
        public var reason: String?

        public init(messageID: String, status: JobStatus, reason: String?) {
            self.messageID = messageID
            self.status = status
            self.reason = reason
        }
    }

    public let client: PostgresClient
    public let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One claim request, for ``claim(_:queue:ownerKey:leaseSeconds:)``.
    public struct ClaimRequest: Sendable {
        public var messageID: String
        public var jobType: String
        /// Unique per delivery being processed: a claim of the same delivery that already
        /// landed (its answer was lost to a deadline) is recognised as its own.
        public var token: String

        public init(messageID: String, jobType: String, token: String) {
            self.messageID = messageID
            self.jobType = jobType
            self.token = token
        }
    }

    public func claim(messageID: String, jobType: String, queue: String, ownerKey: Int64, token: String, leaseSeconds: Int) async throws -> Claim {
        try await claim([ClaimRequest(messageID: messageID, jobType: jobType, token: token)], queue: queue, ownerKey: ownerKey, leaseSeconds: leaseSeconds)[0]
    }

    /// Claims many messages in one statement; answers in the order of `requests`. A
    /// message id that appears twice is claimed once; its other requests are `.busy`.
    public func claim(_ requests: [ClaimRequest], queue: String, ownerKey: Int64, leaseSeconds: Int) async throws -> [Claim] {
        var unique: [String: ClaimRequest] = [:]
        for request in requests where unique[request.messageID] == nil { unique[request.messageID] = request }
        // A stable order, so two workers claiming the same ids lock rows in the same order.
        let batch = unique.values.sorted { $0.messageID < $1.messageID }
        let claim = JobClaim(messageIDs: batch.map(\.messageID), jobTypes: batch.map(\.jobType), tokens: batch.map(\.token), queue: queue,
                             ownerKey: Int(ownerKey), leaseSeconds: leaseSeconds)
        // Each row as it was before this claim (functions/job_claim.sql).
        var answers: [String: Claim] = [:]
        for row in try await claim.rows(on: client, logger: logger) {
            if let attempts = row.attempts {
                answers[row.messageID] = .claimed(attempt: attempts, tookOver: row.previousStatus == .running && row.previousToken != unique[row.messageID]?.token)
            } else if let previousStatus = row.previousStatus, previousStatus.isFinal {
                answers[row.messageID] = .finished(status: previousStatus)
            } else {
                // Held by a live worker.
                answers[row.messageID] = .busy
            }
        }
        var seen: Set<String> = []
        return requests.map { request in
            defer { seen.insert(request.messageID) }
            if seen.contains(request.messageID) || unique[request.messageID]?.token != request.token { return .busy }
            return answers[request.messageID] ?? .busy
        }
    }

    /// The job goes to a delay queue; any worker may claim it when it comes back.
    public func markRetrying(messageID: String, reason: String) async throws {
        try await JobMarkRetrying(messageID: messageID, reason: reason).rows(on: client, logger: logger)
    }

    /// The outcomes' columns of ``JobsFinish``: message ids, statuses, reasons ('' for none).
    static func columns(_ items: [Finished]) -> (ids: [String], statuses: [String], reasons: [String]) {
        (items.map(\.messageID), items.map(\.status.rawValue), items.map { $0.reason ?? "" })
    }

    /// A job replayed from the dead-letter queue runs again, with fresh attempts.
    public func reopen(messageIDs: [String]) async throws {
        guard !messageIDs.isEmpty else { return }
        try await JobsReopen(messageIDs: messageIDs).rows(on: client, logger: logger)
    }
}
