import CRabbitMQ
import Logging

/// A publish owned by the connection thread: waiting in the outbox, then in flight
/// (sent, awaiting the broker's confirm).
final class PublishEntry {
    let body: [UInt8]
    let exchange: String
    let routingKey: String
    let properties: AMQPProperties
    let mandatory: Bool
    let thenAck: SettleTarget?
    let continuation: Completion
    var seq: UInt64 = 0
    var returned: (code: Int, text: String)?

    init(_ request: PublishRequest) {
        body = request.body
        exchange = request.exchange
        routingKey = request.routingKey
        properties = request.properties
        mandatory = request.mandatory
        thenAck = request.thenAck
        continuation = request.continuation
    }
}

extension ConnectionDriver {
    /// Writes outbox messages while the confirm window has room. Returns true if any was sent.
    func publishPending() -> Bool {
        let window = max(1, configuration.confirmWindow)
        var sent = 0
        while sent < Self.publishBatch, inflight.count < window, let entry = outbox.first, let conn {
            if let target = entry.thenAck, channelGeneration[target.channel] != target.generation {
                // Its delivery came on a channel or connection since lost: the broker delivers
                // the original again, so its copy (a retry, a dead letter) would be there twice.
                _ = outbox.popFirst()
                entry.continuation.resume(returning: .failure(.staleDelivery))
                continue
            }
            let rc = entry.body.withUnsafeBufferPointer { buffer -> Int32 in
                var properties = entry.properties.cProperties(in: arena)
                let body = amqp_bytes_t(len: buffer.count, bytes: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
                return amqp_basic_publish(conn, Self.publishChannel, arena.bytes(entry.exchange),
                                          arena.bytes(entry.routingKey), entry.mandatory ? 1 : 0, 0,
                                          &properties, body)
            }
            arena.reset()
            guard rc == AMQP_STATUS_OK.rawValue else {
                if rc == AMQP_STATUS_TABLE_TOO_BIG.rawValue || rc == AMQP_STATUS_BAD_AMQP_DATA.rawValue {
                    // Could not even be encoded: fail it, keep the connection.
                    _ = outbox.popFirst()
                    entry.continuation.resume(returning: .failure(.channelClosed(code: 0, text: Self.statusText(rc))))
                    continue
                }
                connectionLost("publish failed: \(Self.statusText(rc))")
                return true
            }
            _ = outbox.popFirst()
            entry.seq = nextPublishSeq
            entry.returned = nil
            nextPublishSeq += 1
            inflight.append(entry)
            sent += 1
        }
        return sent > 0
    }

    /// basic.ack / basic.nack from the broker on the publish channel.
    func confirm(upTo tag: UInt64, multiple: Bool, nack: Bool) {
        func complete(_ entry: PublishEntry) {
            if nack {
                entry.continuation.resume(returning: .failure(.publishNacked))
            } else if let returned = entry.returned {
                entry.continuation.resume(returning: .failure(.unroutable(code: returned.code, text: returned.text)))
            } else if let target = entry.thenAck {
                // Confirmed: the ack goes out with the next settles (collapsed with them into
                // one multiple ack where it can be), and the caller resumes with its result.
                pendingSettles.append(SettleRequest(channel: target.channel, generation: target.generation,
                                                    deliveryTag: target.deliveryTag, kind: .ack, continuation: entry.continuation))
            } else {
                entry.continuation.resume(returning: .success(()))
            }
        }
        if multiple {
            var count = 0
            while count < inflight.count && inflight[count].seq <= tag {
                complete(inflight[count])
                count += 1
            }
            inflight.removeFirst(count)
        } else if let index = Self.binarySearch(inflight, tag) {
            complete(inflight.remove(at: index))
        }
    }

    /// basic.return (mandatory, unroutable): mark the matching in-flight publish; the broker's
    /// confirm for it follows and then throws `.unroutable`.
    func publishReturned(code: Int, text: String, exchange: String, routingKey: String, messageID: String?) {
        let match = inflight.first { entry in
            entry.mandatory && entry.returned == nil && entry.exchange == exchange && entry.routingKey == routingKey
                && entry.properties.messageID == messageID
        }
        if let match {
            match.returned = (code, text)
        } else {
            logger.debug("AMQP basic.return for no known publish", metadata: ["exchange": "\(exchange)", "routing_key": "\(routingKey)"])
        }
    }

    /// The broker closed the publish channel (e.g. 404 no such exchange). The offending
    /// messages are failed; the others are sent again once the channel is reopened.
    func publishChannelClosed(code: Int, text: String) {
        var culprits: Set<String> = []
        if let range = text.range(of: "no exchange '") {
            let rest = text[range.upperBound...]
            if let end = rest.firstIndex(of: "'") { culprits.insert(String(rest[..<end])) }
        }
        var keep: [PublishEntry] = []
        var failedAny = false
        for (index, entry) in inflight.enumerated() {
            let isCulprit = culprits.isEmpty ? index == 0 : culprits.contains(entry.exchange)
            if isCulprit {
                failedAny = true
                entry.continuation.resume(returning: .failure(.channelClosed(code: code, text: text)))
            } else {
                keep.append(entry)
            }
        }
        if !culprits.isEmpty {
            // Queued publishes to a missing exchange would close the channel again.
            var remaining: [PublishEntry] = []
            for entry in outbox.removeAll() {
                if culprits.contains(entry.exchange) {
                    entry.continuation.resume(returning: .failure(.channelClosed(code: code, text: text)))
                } else {
                    remaining.append(entry)
                }
            }
            for entry in remaining { outbox.append(entry) }
        }
        inflight = []
        outbox.prepend(contentsOf: keep)
        let level: Logger.Level = failedAny ? .warning : .error
        logger.log(level: level, "AMQP publish channel closed by the broker",
                   metadata: ["code": "\(code)", "text": "\(text)"])
    }

    /// After a connection loss: unconfirmed messages go back to the front of the outbox, in order.
    func requeueUnconfirmedPublishes() {
        guard !inflight.isEmpty else { return }
        outbox.prepend(contentsOf: inflight)
        inflight = []
    }

    static func binarySearch(_ entries: [PublishEntry], _ seq: UInt64) -> Int? {
        var low = 0
        var high = entries.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if entries[mid].seq == seq { return mid }
            if entries[mid].seq < seq { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }
}
