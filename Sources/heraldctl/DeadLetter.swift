import AMQP
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWorkers

/// A dead-lettered message as the CLI shows it.
struct DeadLetter {
    /// nil when the message has none (it was dead-lettered for that): such a letter is named
    /// by its ``position`` instead, since any text shown in place of an id could be an id.
    var messageID: String?
    /// 1 for the queue's head when the command looked: `--position N` names the letter again,
    /// until letters before it are replayed or purged.
    var position: Int
    var type: String
    var reason: String
    var category: String
    var attempts: Int64
    var originalRoutingKey: String?
    var publishedAt: Date?
    var deadLetteredAt: Date?
    var bytes: Int

    init(_ delivery: AMQPDelivery, position: Int) {
        let headers = delivery.properties.headers
        func string(_ key: String) -> String? { if case .string(let s)? = headers[key] { return s }; return nil }
        messageID = delivery.properties.messageID.flatMap { $0.isEmpty ? nil : $0 }
        self.position = position
        type = delivery.properties.type ?? "-"
        let stamp = DeadLetterStamp(headers: headers)
        // Broker-side dead-lettering (delivery limit) carries x-first-death-reason instead. A
        // letter with a stamp that cannot be read whole (made by hand, or damaged) is Herald's
        // all the same: its category is unknown, never `broker`, so no filter takes it for one.
        let stamped = headers[DeadLetterStamp.header] != nil || headers["x-herald-reason"] != nil
        reason = DeadLetterStamp.reason(in: headers) ?? string("x-first-death-reason").map { "broker: \($0)" } ?? "unknown"
        category = stamp?.category ?? string("x-herald-category") ?? (stamped ? "unknown" : "broker")
        attempts = stamp?.attempts ?? 0
        publishedAt = delivery.properties.timestamp
        originalRoutingKey = stamp?.routingKey ?? string("x-herald-routing-key")
        var firstDeath: [String: AMQPFieldValue]?
        if case .array(let deaths)? = headers["x-death"], case .table(let first)? = deaths.first { firstDeath = first }
        if originalRoutingKey == nil, case .array(let keys)? = firstDeath?["routing-keys"], case .string(let key)? = keys.first {
            originalRoutingKey = key
        }
        if let stamp {
            deadLetteredAt = stamp.at
        } else if case .timestamp(let date)? = firstDeath?["time"] {
            deadLetteredAt = date
        }
        bytes = delivery.body.count
    }

    func routingKey(default kind: JobKind) -> String {
        originalRoutingKey ?? HeraldFleet.jobTypes(kind).first!.name
    }

    /// The job name without its version suffix: `sms.verification.v1` → `sms.verification`.
    var jobName: String {
        guard let dot = type.lastIndex(of: "."), type[type.index(after: dot)...].hasPrefix("v"),
              Int(type[type.index(dot, offsetBy: 2)...]) != nil else { return type }
        return String(type[..<dot])
    }

    /// Seconds since the message was dead-lettered (or published, if that is all it says).
    func age(now: Date) -> TimeInterval? {
        (deadLetteredAt ?? publishedAt).map { now.timeIntervalSince($0) }
    }

    var json: [String: Any] {
        ["message_id": messageID.map { $0 as Any } ?? NSNull(), "position": position, "type": type, "reason": reason, "category": category, "attempts": attempts,
         "routing_key": originalRoutingKey ?? "", "bytes": bytes,
         "published_at": publishedAt.map { $0.iso8601 } ?? "",
         "dead_lettered_at": deadLetteredAt.map { $0.iso8601 } ?? ""]
    }

    /// How the text output names the letter: its message id, or, without one, the option that
    /// finds it again (with spaces, so it can never be mistaken for an id).
    var handle: String { messageID ?? "(no message id: --position \(position))" }

    func line(now: Date) -> String {
        let age = age(now: now).map { formatAge($0) + " ago" } ?? "age unknown"
        return "\(handle)  \(type)  [\(category), \(attempts) attempts, \(age)]  \(reason)"
    }
}
