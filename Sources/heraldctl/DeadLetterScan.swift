import AMQP
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

/// What a scan does with a matching dead letter.
enum ScanDecision {
    /// Leave it in the queue, where it was.
    case keep
    /// Remove it (ack): it was replayed or purged.
    case take
}

/// The tally of one scan.
struct ScanResult {
    var scanned = 0
    var matched = 0
    var taken = 0
}

/// Walks a dead-letter queue from its head with `basic.get`, hands every letter that
/// `matches` to `visit`, and settles: taken letters are acked, all others are put back (nack
/// with requeue, newest first, so a classic queue keeps its order). Stops after `limit`
/// matches, `scan` messages (default: the depth at the start), or when the queue is empty.
/// Letters are held unacked until the end: if the command dies, the broker puts them back.
func scanDeadLetters(
    _ connection: AMQPConnection, queue: String, limit: Int, scan: Int? = nil, progress: ScanProgress,
    matches: (DeadLetter) -> Bool, visit: (AMQPDelivery, DeadLetter) async throws -> ScanDecision
) async throws -> ScanResult {
    let depth = try await connection.queueState(queue)?.messageCount ?? 0
    let budget = scan ?? depth
    var result = ScanResult()
    var held: [AMQPDelivery] = []
    defer { progress.finish() }
    do {
        while result.scanned < budget, result.matched < limit, let delivery = try await connection.get(queue: queue) {
            result.scanned += 1
            let letter = DeadLetter(delivery, position: result.scanned)
            if matches(letter) {
                result.matched += 1
                if try await visit(delivery, letter) == .take {
                    try await delivery.ack()
                    result.taken += 1
                    progress.update(result, of: budget)
                    continue
                }
            }
            held.append(delivery)
            progress.update(result, of: budget)
        }
    } catch {
        for delivery in held.reversed() { try? await delivery.nack(requeue: true) }
        throw error
    }
    for delivery in held.reversed() { try await delivery.nack(requeue: true) }
    return result
}

/// A one-line progress display on standard error, only when it is a terminal and the output
/// is text (scripts reading JSON get none).
struct ScanProgress {
    let verb: String
    let enabled: Bool

    init(verb: String, output: OutputFormat) {
        self.verb = verb
        enabled = output == .text && isatty(STDERR_FILENO) == 1
    }

    func update(_ result: ScanResult, of budget: Int) {
        guard enabled, result.scanned % 50 == 0 || result.scanned == budget else { return }
        FileHandle.standardError.write(Data("\rscanned \(result.scanned)/\(budget), matched \(result.matched), \(verb) \(result.taken)".utf8))
    }

    func finish() {
        if enabled { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
