import CRabbitMQ

extension ConnectionDriver {
    /// Writes the acks, nacks and rejects collected from the mailbox. Consecutive acks of the
    /// oldest outstanding deliveries on channel 1 collapse into one `multiple` ack.
    /// Returns true if anything was processed.
    func flushSettles() -> Bool {
        guard !pendingSettles.isEmpty else { return false }
        let settles = pendingSettles
        pendingSettles = []
        var results: [(SettleRequest, Result<Void, AMQPError>)] = []
        results.reserveCapacity(settles.count)
        var acks: [SettleRequest] = []

        for request in settles {
            guard isUp, let generation = channelGeneration[request.channel], generation == request.generation else {
                results.append((request, .failure(.staleDelivery)))
                continue
            }
            if request.channel == Self.adminChannel {
                guard outstandingGets.remove(request.deliveryTag) != nil else {
                    results.append((request, .success(())))  // settled already
                    continue
                }
                sendSettle(request.channel, request.kind, tag: request.deliveryTag, multiple: false)
                results.append((request, isUp ? .success(()) : .failure(.staleDelivery)))
                continue
            }
            if request.kind == .ack {
                acks.append(request)
                continue
            }
            guard removeOutstanding(request.deliveryTag) else {
                results.append((request, .success(())))
                continue
            }
            sendSettle(request.channel, request.kind, tag: request.deliveryTag, multiple: false)
            results.append((request, isUp ? .success(()) : .failure(.staleDelivery)))
        }

        if !acks.isEmpty && isUp {
            let tags = Set(acks.map(\.deliveryTag))
            // Longest run of the oldest outstanding deliveries that are all acked now.
            var prefix = 0
            while prefix < outstandingDeliveries.count && tags.contains(outstandingDeliveries[prefix]) {
                prefix += 1
            }
            // The list is updated before the send: a send that fails tears the connection
            // down, which empties it (make chaos crashed a worker on a broker restart when the
            // removal came after the send).
            if prefix > 1 {
                let last = outstandingDeliveries[prefix - 1]
                outstandingDeliveries.removeFirst(prefix)
                sendSettle(Self.consumeChannel, .ack, tag: last, multiple: true)
            } else if prefix == 1 {
                let first = outstandingDeliveries.removeFirst()
                sendSettle(Self.consumeChannel, .ack, tag: first, multiple: false)
            }
            // The rest (acked out of order) one by one; tags no longer outstanding were
            // covered by the multiple ack or settled before.
            for request in acks where isUp {
                if removeOutstanding(request.deliveryTag) {
                    sendSettle(Self.consumeChannel, .ack, tag: request.deliveryTag, multiple: false)
                }
            }
            for request in acks {
                results.append((request, isUp ? .success(()) : .failure(.staleDelivery)))
            }
        } else {
            for request in acks { results.append((request, .failure(.staleDelivery))) }
        }

        for (request, result) in results {
            request.continuation.resume(returning: result)
        }
        return true
    }

    /// Removes a tag from the outstanding list; false if it was not there (already settled).
    private func removeOutstanding(_ tag: UInt64) -> Bool {
        var low = 0
        var high = outstandingDeliveries.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let value = outstandingDeliveries[mid]
            if value == tag {
                outstandingDeliveries.remove(at: mid)
                return true
            }
            if value < tag { low = mid + 1 } else { high = mid - 1 }
        }
        return false
    }

    private func sendSettle(_ channel: UInt16, _ kind: SettleRequest.Kind, tag: UInt64, multiple: Bool) {
        switch kind {
        case .ack:
            send(channel, HERALD_BASIC_ACK, amqp_basic_ack_t(delivery_tag: tag, multiple: multiple ? 1 : 0))
        case .nack(let requeue):
            send(channel, HERALD_BASIC_NACK, amqp_basic_nack_t(delivery_tag: tag, multiple: multiple ? 1 : 0,
                                                              requeue: requeue ? 1 : 0))
        case .reject(let requeue):
            send(channel, HERALD_BASIC_REJECT, amqp_basic_reject_t(delivery_tag: tag, requeue: requeue ? 1 : 0))
        }
    }
}
