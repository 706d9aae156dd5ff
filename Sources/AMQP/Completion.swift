/// How the connection thread reports a publish's or a settle's result: resuming the awaiting
/// task, or calling a closure on the connection thread itself (no task, no thread hand-off:
/// a consumer's screen moving a delivery: ``AMQPMove``).
struct Completion: Sendable {
    private enum Target: Sendable {
        case continuation(CheckedContinuation<Result<Void, AMQPError>, Never>)
        case callback(@Sendable (Result<Void, AMQPError>) -> Void)
    }

    private let target: Target

    init(_ continuation: CheckedContinuation<Result<Void, AMQPError>, Never>) { target = .continuation(continuation) }
    init(_ callback: @escaping @Sendable (Result<Void, AMQPError>) -> Void) { target = .callback(callback) }

    func resume(returning result: Result<Void, AMQPError>) {
        switch target {
        case .continuation(let continuation): continuation.resume(returning: result)
        case .callback(let callback): callback(result)
        }
    }
}
