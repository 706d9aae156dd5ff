import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

/// Which dead letters a `dlq` subcommand works on. Every given filter must match.
struct DeadLetterFilter: ParsableArguments {
    @Option(help: "Worker kind: sms, email, push, cleanup or apple.") var kind: JobKindArgument
    @Option(help: "Only the letter with this message id.") var messageID: String?
    @Option(help: "Only the letter at this position from the head (1 = oldest), as `dlq list` shows it: how a letter without a message id is named.") var position: Int?
    @Option(help: "Only this job type (sms.verification, or with its version: sms.verification.v1).") var type: String?
    @Option(help: "Only messages whose reason contains this text (case-insensitive).") var reason: String?
    @Option(help: "Only this category: invalid (bad input), exhausted (out of retries) or broker (delivery limit).") var category: String?
    @Option(help: "Only messages dead-lettered at least this long ago.") var olderThan: AgeArgument?
    @Option(help: "Only messages dead-lettered at most this long ago.") var newerThan: AgeArgument?
    @Option(help: "Stop after this many matching messages.") var limit = 100
    @Option(help: "Look at no more than this many messages (default: the queue's depth when the command starts).") var scan: Int?

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be positive") }
        if let scan, scan <= 0 { throw ValidationError("--scan must be positive") }
        if let position, position <= 0 { throw ValidationError("--position must be positive") }
    }

    /// Whether any filter is given (purge without one empties the queue at once).
    var isFiltered: Bool {
        messageID != nil || position != nil || type != nil || reason != nil || category != nil || olderThan != nil || newerThan != nil
    }

    /// How many letters to look at: `--scan`, and never past `--position`.
    var scanBudget: Int? { position.map { min($0, scan ?? $0) } ?? scan }

    func matches(_ letter: DeadLetter, now: Date) -> Bool {
        if let messageID, letter.messageID != messageID { return false }
        if let position, letter.position != position { return false }
        if let type, letter.type != type, letter.jobName != type { return false }
        if let reason, !letter.reason.localizedCaseInsensitiveContains(reason) { return false }
        if let category, letter.category != category { return false }
        if olderThan != nil || newerThan != nil {
            guard let age = letter.age(now: now) else { return false }
            if let olderThan, age < olderThan.seconds { return false }
            if let newerThan, age > newerThan.seconds { return false }
        }
        return true
    }
}

/// `--kind sms`
struct JobKindArgument: ExpressibleByArgument, Sendable {
    let kind: JobKind
    init?(argument: String) {
        guard let kind = JobKind(rawValue: argument) else { return nil }
        self.kind = kind
    }
}
