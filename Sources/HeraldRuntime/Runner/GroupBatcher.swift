/// Groups concurrent requests: while one batch is being processed, requests that arrive
/// queue up and go together in the next (group commit, no timers, so a lone request
/// waits for nothing). `process` answers each input in order, or throws for them all.
/// A batch gets `timeout` (``withDeadline``): one database call that never answers (seen
/// after a PostgreSQL restart) fails its batch instead of holding every later one; before
/// this, `make chaos` found workers whose batches waited forever after a 30 s outage.
public actor GroupBatcher<Input: Sendable, Output: Sendable> {
    public typealias Process = @Sendable ([Input]) async throws -> [Result<Output, any Error>]

    private struct Waiter {
        var input: Input
        var continuation: CheckedContinuation<Output, any Error>
    }

    private let maxBatch: Int
    private let timeout: Duration
    private let process: Process
    private let onBatch: @Sendable (Int) -> Void
    private var pending: [Waiter] = []
    private var running = false

    public init(maxBatch: Int, timeout: Duration, onBatch: @escaping @Sendable (Int) -> Void = { _ in }, process: @escaping Process) {
        self.maxBatch = maxBatch
        self.timeout = timeout
        self.process = process
        self.onBatch = onBatch
    }

    public func submit(_ input: Input) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            pending.append(Waiter(input: input, continuation: continuation))
            if !running {
                running = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(maxBatch))
            pending.removeFirst(batch.count)
            let (process, inputs) = (self.process, batch.map(\.input))
            do {
                let results = try await withDeadline(timeout) { try await process(inputs) }
                onBatch(batch.count)
                for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
                for waiter in batch.dropFirst(results.count) {
                    waiter.continuation.resume(throwing: BatchAnswerMissing())
                }
            } catch {
                batch.forEach { $0.continuation.resume(throwing: error) }
            }
        }
        running = false
    }
}

/// `process` answered fewer inputs than it was given (a programming error).
public struct BatchAnswerMissing: Error {}

extension GroupBatcher {
    /// A batcher whose groups go to `together` (one answer per input, in order). A group that
    /// fails for a reason other than the database being away goes again one input at a time
    /// through `alone`, so one bad input fails only its own caller; an unreachable database
    /// fails the whole group (each caller waits it out as it would alone).
    public init(maxBatch: Int, timeout: Duration, onBatch: @escaping @Sendable (Int) -> Void = { _ in },
                together: @escaping @Sendable ([Input]) async throws -> [Output],
                alone: @escaping @Sendable (Input) async throws -> Output) {
        self.init(maxBatch: maxBatch, timeout: timeout, onBatch: onBatch) { inputs in
            do {
                return try await together(inputs).map { .success($0) }
            } catch where DatabaseAvailability.isUnavailable(error) || inputs.count == 1 {
                throw error
            } catch {
                var results: [Result<Output, any Error>] = []
                for input in inputs {
                    do {
                        results.append(.success(try await alone(input)))
                    } catch {
                        results.append(.failure(error))
                    }
                }
                return results
            }
        }
    }
}
