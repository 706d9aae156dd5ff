import CRabbitMQ
import Foundation

/// A message whose method frame arrived and whose header/body frames are being collected.
struct ContentAssembly {
    enum Kind {
        case deliver(consumerTag: String, deliveryTag: UInt64, redelivered: Bool, exchange: String, routingKey: String)
        case returned(code: Int, text: String, exchange: String, routingKey: String)
        case getOK(deliveryTag: UInt64, redelivered: Bool, exchange: String, routingKey: String)
    }

    var kind: Kind
    var properties = AMQPProperties()
    var bodySize: Int = -1
    var body: [UInt8] = []
    /// Body bytes read so far (kept in `body` unless `discarding`).
    var received = 0
    /// The declared body is over the consumer's limit: frames are counted, not kept.
    var discarding = false

    var isComplete: Bool { bodySize >= 0 && received >= bodySize }

    /// What a header declares is only reserved up to this; a larger body grows as it arrives.
    static let maxReservation = 1 << 20
}

extension ConnectionDriver {
    /// Reads every frame already available (up to `readBatch`). rabbitmq-c sends heartbeats
    /// and detects missed ones inside these calls. Returns (read something, nothing left).
    func readFrames() -> (Bool, Bool) {
        var frame = amqp_frame_t()
        // 1 µs rather than 0: with a zero timeout rabbitmq-c never reports a heartbeat timeout.
        var timeout = timeval(tv_sec: 0, tv_usec: 1)
        var didRead = false
        for _ in 0..<Self.readBatch {
            guard let conn else { return (didRead, true) }
            let rc = amqp_simple_wait_frame_noblock(conn, &frame, &timeout)
            if rc == AMQP_STATUS_TIMEOUT.rawValue {
                releaseBuffers()
                return (didRead, true)
            }
            if rc != AMQP_STATUS_OK.rawValue {
                if rc == AMQP_STATUS_HEARTBEAT_TIMEOUT.rawValue {
                    connectionLost("missed heartbeats from the broker")
                } else {
                    connectionLost(Self.statusText(rc))
                }
                return (true, true)
            }
            didRead = true
            handleFrame(frame)
            if frame.frame_type == HERALD_FRAME_BODY, let conn = self.conn {
                // rabbitmq-c reads each frame into its channel's pool and keeps every page it
                // took until a release: without this, one batch of body frames would grow the
                // pool by up to readBatch × frameMax (64 MiB), kept for the connection's life.
                // The fragment is already copied (or dropped), nothing points into it.
                amqp_maybe_release_buffers_on_channel(conn, frame.channel)
            }
        }
        releaseBuffers()
        return (didRead, false)
    }

    private func releaseBuffers() {
        guard let conn, amqp_frames_enqueued(conn) == 0 else { return }
        amqp_maybe_release_buffers(conn)
    }

    private func handleFrame(_ frame: amqp_frame_t) {
        let channel = frame.channel
        switch frame.frame_type {
        case HERALD_FRAME_METHOD:
            handleMethod(channel, frame.payload.method)
        case HERALD_FRAME_HEADER:
            guard var assembly = content[channel] else {
                logger.debug("AMQP content header without a method", metadata: ["channel": "\(channel)"])
                return
            }
            if let decoded = frame.payload.properties.decoded {
                assembly.properties = AMQPProperties(decoded.assumingMemoryBound(to: amqp_basic_properties_t.self).pointee)
            }
            assembly.bodySize = Int(clamping: frame.payload.properties.body_size)
            if let limit = bodyLimit(assembly.kind), assembly.bodySize > limit {
                assembly.discarding = true
            } else {
                assembly.body.reserveCapacity(min(assembly.bodySize, ContentAssembly.maxReservation))
            }
            finishOrStore(channel, assembly)
        case HERALD_FRAME_BODY:
            guard var assembly = content[channel] else { return }
            content[channel] = nil  // avoid a copy-on-write of the body
            let fragment = frame.payload.body_fragment
            assembly.received += fragment.len
            if !assembly.discarding, fragment.len > 0, let bytes = fragment.bytes {
                assembly.body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: fragment.len))
            }
            finishOrStore(channel, assembly)
        default:
            break
        }
    }

    /// The largest body kept for a message of this kind: a consumer's `maxBodyBytes`.
    private func bodyLimit(_ kind: ContentAssembly.Kind) -> Int? {
        guard case .deliver(let consumerTag, _, _, _, _) = kind else { return nil }
        return consumersByTag[consumerTag]?.maxBodyBytes
    }

    private func finishOrStore(_ channel: UInt16, _ assembly: ContentAssembly) {
        if assembly.isComplete {
            content[channel] = nil
            contentComplete(channel, assembly)
        } else {
            content[channel] = assembly
        }
    }

    private func contentComplete(_ channel: UInt16, _ assembly: ContentAssembly) {
        switch assembly.kind {
        case .deliver(let consumerTag, let deliveryTag, let redelivered, let exchange, let routingKey):
            if assembly.discarding {
                logger.debug("AMQP body over the consumer's limit drained unread",
                             metadata: ["channel": "\(channel)", "body_size": "\(assembly.bodySize)"])
            }
            deliver(consumerTag: consumerTag, delivery: AMQPDelivery(
                body: assembly.body, bodySize: assembly.bodySize, properties: assembly.properties, exchange: exchange, routingKey: routingKey,
                redelivered: redelivered, deliveryTag: deliveryTag, mailbox: mailbox, channel: channel,
                generation: channelGeneration[channel] ?? 0))
        case .returned(let code, let text, let exchange, let routingKey):
            publishReturned(code: code, text: text, exchange: exchange, routingKey: routingKey,
                            messageID: assembly.properties.messageID)
        case .getOK(let deliveryTag, let redelivered, let exchange, let routingKey):
            outstandingGets.insert(deliveryTag)
            let delivery = AMQPDelivery(
                body: assembly.body, bodySize: assembly.bodySize, properties: assembly.properties, exchange: exchange, routingKey: routingKey,
                redelivered: redelivered, deliveryTag: deliveryTag, mailbox: mailbox, channel: channel,
                generation: channelGeneration[channel] ?? 0)
            adminStepDone(.delivery(delivery))
        }
    }

    private func handleMethod(_ channel: UInt16, _ method: amqp_method_t) {
        let id = method.id
        let decoded = method.decoded
        func body<T>(_ type: T.Type) -> T { decoded!.assumingMemoryBound(to: T.self).pointee }

        switch id {
        case HERALD_BASIC_DELIVER:
            let m = body(amqp_basic_deliver_t.self)
            content[channel] = ContentAssembly(kind: .deliver(
                consumerTag: m.consumer_tag.string, deliveryTag: m.delivery_tag, redelivered: m.redelivered != 0,
                exchange: m.exchange.string, routingKey: m.routing_key.string))
        case HERALD_BASIC_ACK:
            let m = body(amqp_basic_ack_t.self)
            if channel == Self.publishChannel { confirm(upTo: m.delivery_tag, multiple: m.multiple != 0, nack: false) }
        case HERALD_BASIC_NACK:
            let m = body(amqp_basic_nack_t.self)
            if channel == Self.publishChannel { confirm(upTo: m.delivery_tag, multiple: m.multiple != 0, nack: true) }
        case HERALD_BASIC_RETURN:
            let m = body(amqp_basic_return_t.self)
            content[channel] = ContentAssembly(kind: .returned(
                code: Int(m.reply_code), text: m.reply_text.string, exchange: m.exchange.string,
                routingKey: m.routing_key.string))
        case HERALD_BASIC_GET_OK:
            let m = body(amqp_basic_get_ok_t.self)
            content[channel] = ContentAssembly(kind: .getOK(
                deliveryTag: m.delivery_tag, redelivered: m.redelivered != 0, exchange: m.exchange.string,
                routingKey: m.routing_key.string))
        case HERALD_BASIC_GET_EMPTY:
            adminStepDone(.delivery(nil))
        case HERALD_BASIC_CANCEL:
            let m = body(amqp_basic_cancel_t.self)
            serverCancelled(consumerTag: m.consumer_tag.string)
        case HERALD_CHANNEL_CLOSE:
            let m = body(amqp_channel_close_t.self)
            let code = Int(m.reply_code)
            let text = m.reply_text.string
            guard send(channel, HERALD_CHANNEL_CLOSE_OK, amqp_channel_close_ok_t(dummy: 0)) else { return }
            channelClosed(channel, code: code, text: text)
        case HERALD_CONNECTION_CLOSE:
            let m = body(amqp_connection_close_t.self)
            let reason = "broker closed the connection: \(m.reply_code) \(m.reply_text.string)"
            _ = send(0, HERALD_CONNECTION_CLOSE_OK, amqp_connection_close_ok_t(dummy: 0))
            if isUp { connectionLost(reason) }
        case HERALD_CONNECTION_BLOCKED:
            logger.warning("AMQP connection blocked by the broker (resource alarm); publishes will wait")
            events.blocked(true)
        case HERALD_CONNECTION_UNBLOCKED:
            logger.info("AMQP connection unblocked")
            events.blocked(false)
        case HERALD_CHANNEL_OPEN_OK:
            awaiting[channel] = nil
            channelReopened(channel, afterConfirmSelect: false)
        case HERALD_CONFIRM_SELECT_OK:
            awaiting[channel] = nil
            channelReopened(channel, afterConfirmSelect: true)
        case HERALD_BASIC_QOS_OK, HERALD_BASIC_CONSUME_OK, HERALD_BASIC_CANCEL_OK:
            consumerReply(id)
        case HERALD_EXCHANGE_DECLARE_OK, HERALD_QUEUE_BIND_OK, HERALD_EXCHANGE_DELETE_OK:
            adminStepDone(.done)
        case HERALD_QUEUE_DECLARE_OK:
            let m = body(amqp_queue_declare_ok_t.self)
            adminStepDone(.queueState(AMQPQueueState(messageCount: Int(m.message_count),
                                                     consumerCount: Int(m.consumer_count))))
        case HERALD_QUEUE_PURGE_OK:
            adminStepDone(.count(Int(body(amqp_queue_purge_ok_t.self).message_count)))
        case HERALD_QUEUE_DELETE_OK:
            adminStepDone(.done)
        default:
            logger.debug("AMQP ignoring method", metadata: ["channel": "\(channel)", "method": "\(id)"])
        }
    }

    /// The broker closed a channel (its close-ok is already sent).
    private func channelClosed(_ channel: UInt16, code: Int, text: String) {
        let wasAwaiting = awaiting[channel]
        awaiting[channel] = nil
        content[channel] = nil
        channelState[channel] = .closed
        generationCounter += 1
        channelGeneration[channel] = nil
        switch channel {
        case Self.adminChannel:
            outstandingGets = []
            adminChannelClosed(code: code, text: text, duringStep: wasAwaiting != nil)
        case Self.publishChannel:
            publishChannelClosed(code: code, text: text)
        case Self.consumeChannel:
            consumeChannelClosed(code: code, text: text, awaiting: wasAwaiting)
        default:
            logger.warning("AMQP channel closed", metadata: ["channel": "\(channel)", "code": "\(code)", "text": "\(text)"])
        }
    }
}
