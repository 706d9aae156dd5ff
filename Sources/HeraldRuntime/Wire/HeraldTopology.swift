import AMQP

/// Herald's exchanges and queues, derived from the namespace (`herald` by default).
/// docs/wire-contract.md and deploy/rabbitmq/definitions.json describe the same thing.
public struct HeraldTopology: Sendable {
    public var namespace: String
    public var queueType: BrokerConfiguration.QueueType
    public var deliveryLimit: Int
    public var retryDelaysMilliseconds: [Int]

    public init(namespace: String = "herald", queueType: BrokerConfiguration.QueueType = .quorum, deliveryLimit: Int = 20, retryDelaysMilliseconds: [Int] = RunnerConfiguration().retryDelaysMilliseconds) {
        self.namespace = namespace
        self.queueType = queueType
        self.deliveryLimit = deliveryLimit
        self.retryDelaysMilliseconds = retryDelaysMilliseconds
    }

    public init(_ broker: BrokerConfiguration, _ runner: RunnerConfiguration) {
        self.init(namespace: broker.namespace, queueType: broker.queueType, deliveryLimit: broker.deliveryLimit, retryDelaysMilliseconds: runner.retryDelaysMilliseconds)
    }

    /// Topic exchange the front API publishes jobs to.
    public var jobsExchange: String { namespace }
    /// Topic exchange of the events Herald emits.
    public var eventsExchange: String { "\(namespace).events" }
    /// Direct exchange of dead letters; routing key = the job kind.
    public var deadLetterExchange: String { "\(namespace).dlx" }

    /// The prefix of every replies queue (``JobDecision``): a worker answers only a `reply_to` under it.
    public var repliesPrefix: String { "\(namespace).replies." }
    public func workQueue(_ kind: JobKind) -> String { "\(namespace).\(kind.rawValue)" }
    public func deadLetterQueue(_ kind: JobKind) -> String { "\(namespace).\(kind.rawValue).dead" }
    /// Delay tier `index` (0-based) of a kind: messages wait there, then return to the work queue.
    public func retryQueue(_ kind: JobKind, tier index: Int) -> String { "\(namespace).\(kind.rawValue).retry.\(index + 1)" }

    /// A wait queue of a kind: a job Herald schedules for later (a fallback to the next channel)
    /// waits there `seconds`, then goes to the kind's work queue. One queue per wait, as a
    /// queue's messages expire in order: a shorter wait behind a longer one would wait as long.
    public func waitQueue(_ kind: JobKind, seconds: Int) -> String { "\(namespace).\(kind.rawValue).wait.\(seconds)s" }
    /// The routing key, on the jobs exchange, of ``waitQueue(_:seconds:)`` (no job's name matches it).
    public func waitRoutingKey(_ kind: JobKind, seconds: Int) -> String { "wait.\(kind.rawValue).\(seconds)s" }

    /// The delay tier of try `attempt` (1-based) that failed.
    public func retryTier(afterAttempt attempt: Int) -> Int { min(max(attempt - 1, 0), retryDelaysMilliseconds.count - 1) }

    /// Everything, for `heraldctl topology declare` and the client.
    public var all: AMQPTopology { JobKind.allCases.reduce(into: shared) { $0.merge(self.topology(for: $1)) } }

    /// The exchanges every process needs.
    public var shared: AMQPTopology {
        AMQPTopology(exchanges: [
            .init(name: jobsExchange, type: "topic"),
            .init(name: eventsExchange, type: "topic"),
            .init(name: deadLetterExchange, type: "direct"),
        ])
    }

    /// One kind's queues and bindings (plus the shared exchanges), with a wait queue for each of
    /// `waits` (seconds: the handler's ``JobHandler/waitSeconds``).
    public func topology(for kind: JobKind, waits: [Int] = []) -> AMQPTopology {
        var topology = shared
        var workArguments: AMQPTable = [
            "x-dead-letter-exchange": .string(deadLetterExchange),
            "x-dead-letter-routing-key": .string(kind.rawValue),
        ]
        if queueType == .quorum {
            workArguments["x-queue-type"] = .string("quorum")
            workArguments["x-delivery-limit"] = .int(Int64(deliveryLimit))
        } else {
            workArguments["x-queue-type"] = .string("classic")
        }
        topology.queues.append(.init(name: workQueue(kind), arguments: workArguments))
        topology.bindings.append(.init(queue: workQueue(kind), exchange: jobsExchange, routingKey: "\(kind.routingPrefix).#"))
        topology.queues.append(.init(name: deadLetterQueue(kind), arguments: ["x-queue-type": .string("classic")]))
        topology.bindings.append(.init(queue: deadLetterQueue(kind), exchange: deadLetterExchange, routingKey: kind.rawValue))
        for (index, delay) in retryDelaysMilliseconds.enumerated() {
            topology.queues.append(.init(name: retryQueue(kind, tier: index), arguments: [
                "x-queue-type": .string("classic"),
                "x-message-ttl": .int(Int64(delay)),
                "x-dead-letter-exchange": .string(""),
                "x-dead-letter-routing-key": .string(workQueue(kind)),
            ]))
        }
        for seconds in Set(waits).sorted() {
            topology.queues.append(.init(name: waitQueue(kind, seconds: seconds), arguments: [
                "x-queue-type": .string("classic"),
                "x-message-ttl": .int(Int64(seconds) * 1000),
                "x-dead-letter-exchange": .string(""),
                "x-dead-letter-routing-key": .string(workQueue(kind)),
            ]))
            topology.bindings.append(.init(queue: waitQueue(kind, seconds: seconds), exchange: jobsExchange, routingKey: waitRoutingKey(kind, seconds: seconds)))
        }
        return topology
    }
}

extension AMQPTopology {
    /// Adds what `other` declares and `self` does not.
    mutating func merge(_ other: AMQPTopology) {
        for exchange in other.exchanges where !exchanges.contains(where: { $0.name == exchange.name }) { exchanges.append(exchange) }
        for queue in other.queues where !queues.contains(where: { $0.name == queue.name }) { queues.append(queue) }
        for binding in other.bindings where !bindings.contains(binding) { bindings.append(binding) }
    }
}
