import HTTPTypes
import Hummingbird
import NIOCore

/// What a generated `/v1` handler knows of its request besides its input: the request's
/// context (the API key, the client's address, the logger), set by ``V1Request/Scope``.
enum V1Request {
    @TaskLocal static var context: APIContext?

    static func current() throws -> APIContext {
        guard let context else { throw APIFailure.unauthenticated }
        return context
    }

    /// The last middleware of a `/v1` family's group, after its authenticator: reads the body
    /// (more than `api.max_body_bytes` is 413) and runs the generated route in the request's
    /// context. Two rules of `/v1` that the generated decoding does not have, kept here
    /// (docs/api.md, "The contract"): an empty body is read as `{}`, and the `Content-Type` is not
    /// checked (`curl -d` sends a form type): the body is read as JSON whatever it says.
    struct Scope: RouterMiddleware {
        typealias Context = APIContext
        let maxBodyBytes: Int

        func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
            var request = request
            if request.method == .post {
                var body = try await request.collectBody(upTo: maxBodyBytes)
                if body.readableBytes == 0 { body = ByteBuffer(string: "{}") }
                var head = request.head
                head.headerFields[.contentType] = "application/json"
                head.headerFields[.contentLength] = String(body.readableBytes)
                request = Request(head: head, body: .init(buffer: body))
            }
            return try await V1Request.$context.withValue(context) { [request] in try await next(request, context) }
        }
    }
}
