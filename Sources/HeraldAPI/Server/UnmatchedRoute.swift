import HTTPTypes
import Hummingbird

/// The answer to a request no route takes (an unknown path, or a method its path does not
/// have): 404 in the dialect of the path's family, Twilio's 20404 under `/v2`, Herald's
/// `not_found` elsewhere. Added to the router after every route, so it wraps only the
/// router's not-found responder.
struct UnmatchedRoute: RouterMiddleware {
    typealias Context = APIContext

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            throw Self.error(path: request.uri.path)
        }
    }

    static func error(path: String) -> any HTTPResponseError {
        if path == "/v2" || path.hasPrefix("/v2/") { return TwilioError(.notFound("route"), path: path) }
        return V1Error(failure: .notFound("route"))
    }
}
