import AMQP
import Foundation

/// A queue of the harness's namespace bound to one channel's events (`sms.#`, `email.#`,
/// `push.#`): what a front API's consumer would read. Deleted when the harness closes.
final class EventTap: Sendable {
    let harness: Harness
    let queue: String

    init(_ harness: Harness, channel: String) async throws {
        self.harness = harness
        queue = "\(harness.namespace).test-\(channel)-events"
        try await harness.connection.declare(.init(
            queues: [.init(name: queue, durable: false, autoDelete: false)],
            bindings: [.init(queue: queue, exchange: harness.topology.eventsExchange, routingKey: "\(channel).#")]))
        harness.onClose { [queue] in try? await harness.connection.deleteQueue(queue) }
    }

    /// The events that have arrived so far: (routing key, JSON object).
    func take() async throws -> [(String, [String: Any])] {
        var out: [(String, [String: Any])] = []
        while let delivery = try await harness.connection.get(queue: queue) {
            out.append((delivery.routingKey, (try? JSONSerialization.jsonObject(with: Data(delivery.body))) as? [String: Any] ?? [:]))
            try await delivery.ack()
        }
        return out
    }

    /// The names of `events` in the order they occurred, by their `occurred_at` (RFC 3339, UTC,
    /// milliseconds: it sorts as text). Not their order of arrival: the wire contract promises
    /// none (a relay publishes a batch side by side, and every worker relays).
    static func namesByOccurrence(_ events: [(String, [String: Any])]) -> [String] {
        events.enumerated().sorted { a, b in
            let (x, y) = (a.element.1["occurred_at"] as? String ?? "", b.element.1["occurred_at"] as? String ?? "")
            return x == y ? a.offset < b.offset : x < y
        }.map(\.element.0)
    }

    /// The events, waiting until at least `count` have arrived: the relay publishes them after
    /// the outcome commits, so they trail the ledger (and more may come later).
    func take(atLeast count: Int) async throws -> [(String, [String: Any])] {
        try await take { $0.count >= count }
    }

    /// The events, waiting until `done` holds for those collected so far (30 s at most: a loaded
    /// CI machine ran one test for 66 s). Wait for the event a test is about by name: a count is
    /// met by the earlier events already queued while the one asked for is still on its way.
    func take(until done: @escaping @Sendable ([(String, [String: Any])]) -> Bool) async throws -> [(String, [String: Any])] {
        let collected = EventBox()
        try? await eventually(timeout: .seconds(30), "events") {
            collected.append(try await self.take())
            return done(collected.all)
        }
        return collected.all
    }

    /// The first event named `name`, waiting for it (nil when none came within 30 s).
    func first(_ name: String) async throws -> (String, [String: Any])? {
        try await take { $0.contains { $0.0 == name } }.first { $0.0 == name }
    }
}

/// Events collected across polls.
final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [(String, [String: Any])] = []
    func append(_ more: [(String, [String: Any])]) { lock.withLock { events += more } }
    var count: Int { lock.withLock { events.count } }
    var all: [(String, [String: Any])] { lock.withLock { events } }
}
