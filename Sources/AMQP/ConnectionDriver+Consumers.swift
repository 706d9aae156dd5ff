import CRabbitMQ
import Logging

/// A consumer owned by the connection thread.
final class ConsumerEntry {
    enum State {
        /// Needs basic.qos + basic.consume (new, or after a reconnect / channel reopen).
        case pending
        case subscribing
        case active
    }

    let id: UInt64
    let queue: String
    let prefetch: UInt16
    let maxBodyBytes: Int?
    let tag: String
    let sink: ConsumerSink
    var state: State = .pending
    var cancelRequested = false
    var cancelWaiters: [CheckedContinuation<Void, Never>] = []
    var queuedForWork = false

    init(_ registration: ConsumerRegistration, connectionName: String) {
        id = registration.id
        queue = registration.queue
        prefetch = registration.prefetch
        maxBodyBytes = registration.maxBodyBytes
        tag = "\(connectionName).\(registration.id)"
        sink = registration.sink
    }
}

extension ConnectionDriver {
    func addConsumer(_ registration: ConsumerRegistration) {
        let entry = ConsumerEntry(registration, connectionName: configuration.connectionName)
        consumers[entry.id] = entry
        consumersByTag[entry.tag] = entry
        enqueueConsumerWork(entry)
    }

    func requestCancel(_ id: UInt64, done: CheckedContinuation<Void, Never>?) {
        guard let entry = consumers[id] else {
            done?.resume()
            return
        }
        entry.cancelRequested = true
        if let done { entry.cancelWaiters.append(done) }
        if entry.state == .pending {
            removeConsumer(entry)  // not subscribed at the broker (yet, or since a connection loss)
        } else {
            enqueueConsumerWork(entry)
        }
    }

    private func enqueueConsumerWork(_ entry: ConsumerEntry) {
        guard !entry.queuedForWork else { return }
        entry.queuedForWork = true
        consumerWork.append(entry.id)
    }

    /// Sends the next consumer RPC on channel 1 (qos, consume or cancel). True if sent.
    func startNextConsumerOp() -> Bool {
        while let id = consumerWork.popFirst() {
            guard let entry = consumers[id] else { continue }
            entry.queuedForWork = false
            if entry.cancelRequested {
                switch entry.state {
                case .pending:
                    removeConsumer(entry)
                    continue
                case .active:
                    awaiting[Self.consumeChannel] = .cancel(consumer: id)
                    send(Self.consumeChannel, HERALD_BASIC_CANCEL,
                         amqp_basic_cancel_t(consumer_tag: arena.bytes(entry.tag), nowait: 0))
                    return true
                case .subscribing:
                    continue  // requeued when the subscription completes
                }
            }
            guard entry.state == .pending else { continue }
            entry.state = .subscribing
            awaiting[Self.consumeChannel] = .qos(consumer: id)
            send(Self.consumeChannel, HERALD_BASIC_QOS,
                 amqp_basic_qos_t(prefetch_size: 0, prefetch_count: entry.prefetch, global: 0))
            return true
        }
        return false
    }

    /// qos-ok, consume-ok or cancel-ok on channel 1.
    func consumerReply(_ method: amqp_method_number_t) {
        guard let waiting = awaiting[Self.consumeChannel] else { return }
        awaiting[Self.consumeChannel] = nil
        switch waiting {
        case .qos(let id) where method == HERALD_BASIC_QOS_OK:
            guard let entry = consumers[id] else { return }
            awaiting[Self.consumeChannel] = .consume(consumer: id)
            send(Self.consumeChannel, HERALD_BASIC_CONSUME, amqp_basic_consume_t(
                ticket: 0, queue: arena.bytes(entry.queue), consumer_tag: arena.bytes(entry.tag), no_local: 0,
                no_ack: 0, exclusive: 0, nowait: 0, arguments: amqp_table_t(num_entries: 0, entries: nil)))
        case .consume(let id) where method == HERALD_BASIC_CONSUME_OK:
            guard let entry = consumers[id] else { return }
            entry.state = .active
            logger.debug("AMQP consumer subscribed", metadata: ["queue": "\(entry.queue)", "prefetch": "\(entry.prefetch)"])
            if entry.cancelRequested { enqueueConsumerWork(entry) }
        case .cancel(let id) where method == HERALD_BASIC_CANCEL_OK:
            if let entry = consumers[id] { removeConsumer(entry) }
        default:
            logger.debug("AMQP unexpected reply on the consume channel", metadata: ["method": "\(method)"])
        }
    }

    func removeConsumer(_ entry: ConsumerEntry) {
        consumers[entry.id] = nil
        consumersByTag[entry.tag] = nil
        entry.sink.finish()
        for waiter in entry.cancelWaiters { waiter.resume() }
        entry.cancelWaiters = []
    }

    /// A basic.deliver with its content.
    func deliver(consumerTag: String, delivery: AMQPDelivery) {
        guard let entry = consumersByTag[consumerTag], !entry.cancelRequested else {
            // Cancelled locally: hand it back to the broker at once.
            send(Self.consumeChannel, HERALD_BASIC_REJECT, amqp_basic_reject_t(delivery_tag: delivery.deliveryTag, requeue: 1))
            return
        }
        outstandingDeliveries.append(delivery.deliveryTag)
        switch entry.sink.offer(delivery) {
        case .handedOut:
            break
        case .terminated:
            outstandingDeliveries.removeLast()
            send(Self.consumeChannel, HERALD_BASIC_REJECT, amqp_basic_reject_t(delivery_tag: delivery.deliveryTag, requeue: 1))
            requestCancel(entry.id, done: nil)
        case .move(let move):
            // Screened out: the copy joins the outbox here, acked after its confirm like any move.
            let target = SettleTarget(of: delivery)
            outbox.append(PublishEntry(PublishRequest(body: move.body, exchange: move.exchange, routingKey: move.routingKey,
                                                      properties: move.properties, mandatory: false, thenAck: target,
                                                      continuation: Completion(move.completion))))
        }
    }

    /// basic.cancel from the broker (queue deleted, …): the sequence finishes.
    func serverCancelled(consumerTag: String) {
        guard let entry = consumersByTag[consumerTag] else { return }
        logger.warning("AMQP consumer cancelled by the broker", metadata: ["queue": "\(entry.queue)"])
        removeConsumer(entry)
    }

    /// The broker closed channel 1. A subscription that caused it (no such queue, …) ends;
    /// every other consumer is subscribed again on the reopened channel.
    func consumeChannelClosed(code: Int, text: String, awaiting waiting: Awaiting?) {
        outstandingDeliveries = []
        var failedID: UInt64?
        if case .consume(let id) = waiting { failedID = id }
        if case .qos(let id) = waiting { failedID = id }
        for entry in consumers.values.sorted(by: { $0.id < $1.id }) {
            if entry.id == failedID {
                logger.error("AMQP consume failed", metadata: ["queue": "\(entry.queue)", "code": "\(code)", "text": "\(text)"])
                removeConsumer(entry)
                continue
            }
            entry.state = .pending
            enqueueConsumerWork(entry)
        }
        if failedID == nil {
            logger.warning("AMQP consume channel closed by the broker; resubscribing",
                           metadata: ["code": "\(code)", "text": "\(text)"])
        }
    }

    /// After a connection loss: everyone subscribes again once reconnected.
    func consumersLost() {
        for entry in consumers.values.sorted(by: { $0.id < $1.id }) {
            entry.state = .pending
            enqueueConsumerWork(entry)
        }
    }
}
