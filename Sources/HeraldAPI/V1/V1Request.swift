import HTTPTypes
import Hummingbird
import NIOCore

/// What a generated `/v1` handler knows of its request besides its input: the request's
/// context (the API key, the client's address, the logger, the path's parameters) and its header
/// fields as sent, set by ``V1Request/Scope``. Ids are taken from these as they were sent
/// (an `Idempotency-Key`, `X-Correlation-ID`, a path's id): the generated input percent-decodes
/// them, and an id must not change its meaning from one version of herald-api to the next.
struct V1Request: Sendable {
    let context: APIContext
    let headers: HTTPFields

    @TaskLocal static var current: V1Request?

    static func get() throws -> V1Request {
        guard let current else { throw APIFailure.unauthenticated }
        return current
    }

    /// The last middleware of a `/v1` family's group, after its authenticator: reads the body
    /// (more than `api.max_body_bytes` is 413) and runs the generated route in the request's
    /// context. Three rules of `/v1` that the generated routes do not have, kept here
    /// (docs/api.md, "The contract"): an empty body is read as `{}`; the `Content-Type` is not
    /// checked (`curl -d` sends a form type), the body is read as JSON whatever it says; and
    /// `Accept` is not checked (the answer is JSON whatever it asks for).
    struct Scope: RouterMiddleware {
        typealias Context = APIContext
        let maxBodyBytes: Int

        func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
            var request = request
            let sent = request.head.headerFields
            var head = request.head
            head.headerFields[.accept] = nil
            var body = request.body
            if request.method == .post {
                var read = try await request.collectBody(upTo: maxBodyBytes)
                if read.readableBytes == 0 { read = ByteBuffer(string: "{}") }
                head.headerFields[.contentType] = "application/json"
                head.headerFields[.contentLength] = String(read.readableBytes)
                body = .init(buffer: read)
            }
            let scoped = Request(head: head, body: body)
            return try await V1Request.$current.withValue(V1Request(context: context, headers: sent)) {
                try await next(scoped, context)
            }
        }
    }
}
