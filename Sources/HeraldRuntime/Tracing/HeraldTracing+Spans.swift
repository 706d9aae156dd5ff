import Tracing

extension HeraldTracing {
    /// Runs `operation` in a child span of the current one when tracing is on; else runs it
    /// as it is, with no span (`nil`; `name` is not even built). A thrown error marks the span
    /// failed with its kind only (``failed(_:_:)``), and is rethrown.
    public static func withSpan<T>(_ name: @autoclosure () -> String, ofKind kind: SpanKind = .internal,
                                   _ operation: ((any Span)?) async throws -> T) async rethrows -> T {
        guard let tracer else { return try await operation(nil) }
        let span = tracer.startSpan(name(), context: InstrumentationContext.current ?? .topLevel, ofKind: kind)
        defer { span.end() }
        do {
            return try await InstrumentationContext.$current.withValue(span.context) { try await operation(span) }
        } catch {
            failed(span, error)
            throw error
        }
    }

    /// Marks `span` failed: status error and `error.type`, the error's kind as the logs name it
    /// (an AMQP error, a SQLSTATE, a type). Never `recordError`: its `exception.message` is the
    /// error's whole description, which for a PostgreSQL error holds the server's detail (row
    /// values) and for a 404 the path (a phone number in Twilio Verify's).
    public static func failed(_ span: any Span, _ error: any Error) {
        span.updateAttributes { $0[TraceKey.errorType] = RunnerObserver.describe(error) }
        span.setStatus(.init(code: .error))
    }
}
