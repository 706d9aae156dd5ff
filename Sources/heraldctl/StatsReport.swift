import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import PostgresNIO

/// What `heraldctl stats` shows: the broker's view of every queue, and the ledger's view of
/// the jobs (rates and outcomes).
struct StatsReport {
    struct QueueRow {
        var name: String
        var kind: JobKind
        /// `work`, `retry` or `dead`, as the `role` label of `herald_queue_messages`.
        var role: String
        var state: AMQPQueueState?
        /// Seconds since the head message was published (its AMQP timestamp), when looked at.
        var oldestAge: TimeInterval?
        /// Why there is no age: `empty`, `no timestamp`, `not peeked` (a quorum work queue).
        var ageNote: String?
    }

    struct Rate {
        var queue: String
        var finishedLastMinute: Int
        var finishedLastFiveMinutes: Int
    }

    struct Outcome {
        var queue: String
        var type: String
        var status: String
        var count: Int
    }

    var queues: [QueueRow] = []
    var rates: [Rate] = []
    /// Jobs finished inside the window, by type and final status.
    var finished: [Outcome] = []
    /// Jobs claimed and not finished (running, retrying), whenever they started.
    var open: [Outcome] = []
    var windowSeconds: Int

    /// Reads every queue's depth and consumers; peeks at the head of the classic queues (retry
    /// tiers, dead letters) with `basic.get` and a requeue, which costs nothing there. A quorum
    /// work queue is peeked only with `peekWorkQueues`: each peek counts as a delivery against
    /// the queue's delivery limit and marks the head job redelivered.
    static func queues(_ connection: AMQPConnection, topology: HeraldTopology, peekWorkQueues: Bool) async throws -> [QueueRow] {
        var rows: [QueueRow] = []
        let now = Date()
        for kind in JobKind.allCases {
            var names: [(String, String)] = [(topology.workQueue(kind), "work")]
            names += topology.retryDelaysMilliseconds.indices.map { (topology.retryQueue(kind, tier: $0), "retry") }
            names.append((topology.deadLetterQueue(kind), "dead"))
            for (name, role) in names {
                var row = QueueRow(name: name, kind: kind, role: role, state: try await connection.queueState(name))
                let peekable = role != "work" || topology.queueType == .classic || peekWorkQueues
                if row.state == nil {
                    row.ageNote = "missing"
                } else if row.state?.messageCount == 0 {
                    row.ageNote = "empty"
                } else if !peekable {
                    row.ageNote = "not peeked"
                } else if let head = try await connection.get(queue: name) {
                    try await head.nack(requeue: true)
                    if let published = head.properties.timestamp { row.oldestAge = now.timeIntervalSince(published) } else { row.ageNote = "no timestamp" }
                } else {
                    row.ageNote = "empty"
                }
                rows.append(row)
            }
        }
        return rows
    }

    /// Rates and outcomes from `herald.job_runs`. `finished_at` is indexed; the open jobs are
    /// few by nature.
    static func ledger(_ client: PostgresClient, windowSeconds: Int, logger: Logger) async throws -> (rates: [Rate], finished: [Outcome], open: [Outcome]) {
        let rates = try await LedgerRates().rows(on: client, logger: logger).map {
            Rate(queue: $0.queue, finishedLastMinute: $0.lastMinute, finishedLastFiveMinutes: $0.lastFiveMinutes)
        }
        let finished = try await LedgerFinished(windowSeconds: Double(windowSeconds)).rows(on: client, logger: logger).map {
            Outcome(queue: $0.queue, type: $0.jobType, status: $0.status, count: $0.count)
        }
        let open = try await LedgerOpen().rows(on: client, logger: logger).map {
            Outcome(queue: $0.queue, type: $0.jobType, status: $0.status, count: $0.count)
        }
        return (rates, finished, open)
    }
}
