import CRabbitMQ
import Logging

/// An admin request owned by the connection thread (channel 3): one or more RPC steps run
/// one after another. `continuation == nil` marks the init topology declared after connecting.
final class AdminEntry {
    let steps: [AdminStep]
    var index = 0
    let continuation: CheckedContinuation<Result<AdminResult, AMQPError>, Never>?
    var lastResult: AdminResult = .done

    init(steps: [AdminStep], continuation: CheckedContinuation<Result<AdminResult, AMQPError>, Never>?) {
        self.steps = steps
        self.continuation = continuation
    }

    var isInitTopology: Bool { continuation == nil }
}

extension ConnectionDriver {
    /// Sends the next admin step, if any. Returns true if something was sent.
    func startNextAdminStep() -> Bool {
        if adminCurrent == nil {
            adminCurrent = adminQueue.popFirst()
        }
        guard let entry = adminCurrent else { return false }
        let step = entry.steps[entry.index]
        awaiting[Self.adminChannel] = .admin
        let channel = Self.adminChannel
        let a = arena
        switch step {
        case .declareExchange(let e):
            send(channel, HERALD_EXCHANGE_DECLARE, amqp_exchange_declare_t(
                ticket: 0, exchange: a.bytes(e.name), type: a.bytes(e.type), passive: 0, durable: e.durable ? 1 : 0,
                auto_delete: e.autoDelete ? 1 : 0, internal: e.internal ? 1 : 0, nowait: 0,
                arguments: AMQPFieldValue.cTable(e.arguments, in: a)))
        case .declareQueue(let q):
            send(channel, HERALD_QUEUE_DECLARE, amqp_queue_declare_t(
                ticket: 0, queue: a.bytes(q.name), passive: 0, durable: q.durable ? 1 : 0,
                exclusive: q.exclusive ? 1 : 0, auto_delete: q.autoDelete ? 1 : 0, nowait: 0,
                arguments: AMQPFieldValue.cTable(q.arguments, in: a)))
        case .bind(let b):
            send(channel, HERALD_QUEUE_BIND, amqp_queue_bind_t(
                ticket: 0, queue: a.bytes(b.queue), exchange: a.bytes(b.exchange), routing_key: a.bytes(b.routingKey),
                nowait: 0, arguments: AMQPFieldValue.cTable(b.arguments, in: a)))
        case .passiveDeclareQueue(let name):
            send(channel, HERALD_QUEUE_DECLARE, amqp_queue_declare_t(
                ticket: 0, queue: a.bytes(name), passive: 1, durable: 0, exclusive: 0, auto_delete: 0, nowait: 0,
                arguments: amqp_table_t(num_entries: 0, entries: nil)))
        case .get(let queue):
            send(channel, HERALD_BASIC_GET, amqp_basic_get_t(ticket: 0, queue: a.bytes(queue), no_ack: 0))
        case .purge(let queue):
            send(channel, HERALD_QUEUE_PURGE, amqp_queue_purge_t(ticket: 0, queue: a.bytes(queue), nowait: 0))
        case .deleteQueue(let name):
            send(channel, HERALD_QUEUE_DELETE, amqp_queue_delete_t(
                ticket: 0, queue: a.bytes(name), if_unused: 0, if_empty: 0, nowait: 0))
        case .deleteExchange(let name):
            send(channel, HERALD_EXCHANGE_DELETE, amqp_exchange_delete_t(
                ticket: 0, exchange: a.bytes(name), if_unused: 0, nowait: 0))
        }
        return true
    }

    /// The reply to the current admin step arrived.
    func adminStepDone(_ result: AdminResult) {
        guard case .admin = awaiting[Self.adminChannel], let entry = adminCurrent else {
            logger.debug("AMQP unexpected admin reply")
            return
        }
        awaiting[Self.adminChannel] = nil
        entry.lastResult = result
        entry.index += 1
        guard entry.index >= entry.steps.count else { return }
        adminCurrent = nil
        if let continuation = entry.continuation {
            continuation.resume(returning: .success(entry.lastResult))
        } else {
            initTopologyFinished()
        }
    }

    /// The broker closed channel 3: fail the current request (404 on a passive declare
    /// means "no such queue"), then the channel is reopened by the loop.
    func adminChannelClosed(code: Int, text: String, duringStep: Bool) {
        guard duringStep, let entry = adminCurrent else {
            logger.warning("AMQP admin channel closed", metadata: ["code": "\(code)", "text": "\(text)"])
            return
        }
        adminCurrent = nil
        if entry.isInitTopology {
            logger.error("AMQP declaring the topology failed; continuing without it",
                         metadata: ["code": "\(code)", "text": "\(text)"])
            // Skip the failing step, declare the rest.
            let rest = Array(entry.steps[(entry.index + 1)...])
            if rest.isEmpty {
                initTopologyFinished()
            } else {
                adminQueue.prepend(contentsOf: [AdminEntry(steps: rest, continuation: nil)])
            }
            return
        }
        if code == 404, case .passiveDeclareQueue = entry.steps[entry.index] {
            entry.continuation?.resume(returning: .success(.queueState(nil)))
        } else {
            entry.continuation?.resume(returning: .failure(.channelClosed(code: code, text: text)))
        }
    }

    /// After a connection loss the current request starts over once reconnected.
    func requeueAdminAfterLoss() {
        if let entry = adminCurrent {
            adminCurrent = nil
            if entry.isInitTopology {
                return  // declared again from scratch on connect
            }
            entry.index = 0
            adminQueue.prepend(contentsOf: [entry])
        }
        // Drop stale init-topology entries; connect() queues a fresh one.
        let all = adminQueue.removeAll()
        for entry in all where !entry.isInitTopology { adminQueue.append(entry) }
    }

    private func initTopologyFinished() {
        guard !topologyReady else { return }
        topologyReady = true
        events.connected()
    }
}
