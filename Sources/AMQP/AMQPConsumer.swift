/// The deliveries of one `basic.consume` (or what its screen made of them), as an async sequence.
///
/// The subscription survives reconnects (it is re-subscribed with its prefetch). The sequence
/// finishes after `cancel()`, after `AMQPConnection.close()`, when the broker cancels the
/// consumer (e.g. the queue was deleted) or when subscribing fails (e.g. no such queue).
/// Ending the iteration (or cancelling the iterating task) cancels the subscription.
public struct AMQPConsumer<Element: Sendable>: AsyncSequence, Sendable {
    public typealias AsyncIterator = AsyncStream<Element>.Iterator

    let id: UInt64
    let queue: String
    let stream: AsyncStream<Element>
    let mailbox: Mailbox

    public func makeAsyncIterator() -> AsyncStream<Element>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Sends basic.cancel and waits for the broker's answer; the sequence then finishes.
    /// Deliveries already handed out can still be acked.
    public func cancel() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if mailbox.post(.cancelConsumer(id: id, done: continuation)) != nil {
                continuation.resume()
            }
        }
    }
}
