/// Groups concurrent requests: while one batch is being processed, requests that arrive
/// queue up and go together in the next (group commit, no timers, so a lone request
/// waits for nothing). `process` answers each input in order, or throws for them all.
actor GroupBatcher<Input: Sendable, Output: Sendable> {
    typealias Process = @Sendable ([Input]) async throws -> [Result<Output, any Error>]

    private struct Waiter {
        var input: Input
        var continuation: CheckedContinuation<Output, any Error>
    }

    private let maxBatch: Int
    private let process: Process
    private let onBatch: @Sendable (Int) -> Void
    private var pending: [Waiter] = []
    private var running = false

    init(maxBatch: Int, onBatch: @escaping @Sendable (Int) -> Void = { _ in }, process: @escaping Process) {
        self.maxBatch = maxBatch
        self.process = process
        self.onBatch = onBatch
    }

    func submit(_ input: Input) async throws -> Output {
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
            do {
                let results = try await process(batch.map(\.input))
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
struct BatchAnswerMissing: Error {}
