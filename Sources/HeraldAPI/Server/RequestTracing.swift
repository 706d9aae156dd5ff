import HeraldRuntime
import HTTPTypes
import Hummingbird
import Tracing

/// A server span for each request when tracing is on (``HeraldTracing``), continuing the
/// caller's trace (`traceparent`), named `<method> <route>` (`POST /v1/sms/verifications`) and
/// attributed with the method, the route and the status: the jobs a request publishes are its
/// children. Not Hummingbird's `TracingMiddleware`: that one records `url.path` and `url.query`
/// as they are, and Twilio Verify's paths carry phone numbers (`/Verifications/+15551234567`).
struct RequestTracing<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let tracer = HeraldTracing.tracer else { return try await next(request, context) }
        var parent = InstrumentationContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: FieldsExtractor())
        let method = request.method.rawValue
        let span = tracer.startSpan(method, context: parent, ofKind: .server)
        defer { span.end() }
        do {
            let response = try await InstrumentationContext.$current.withValue(span.context) { try await next(request, context) }
            finish(span, method: method, status: Int(response.status.code), route: context.endpointPath)
            return response
        } catch {
            finish(span, method: method, status: Int((error as? any HTTPResponseError)?.status.code ?? 500), route: context.endpointPath)
            // The kind only: a 404's description holds the path (a phone number in Twilio Verify's).
            span.updateAttributes { if $0[TraceKey.errorType] == nil { $0[TraceKey.errorType] = String(reflecting: type(of: error)) } }
            throw error
        }
    }

    private func finish(_ span: any Span, method: String, status: Int, route: String?) {
        if let route { span.operationName = "\(method) \(route)" }
        span.updateAttributes { attributes in
            attributes[TraceKey.httpMethod] = method
            attributes[TraceKey.httpRoute] = route
            attributes[TraceKey.httpStatus] = status
            if status >= 500 { attributes[TraceKey.errorType] = String(status) }
        }
        if status >= 500 { span.setStatus(.init(code: .error)) }
    }

    private struct FieldsExtractor: Extractor {
        func extract(key: String, from fields: HTTPFields) -> String? {
            HTTPField.Name(key).flatMap { fields[$0] }
        }
    }
}
