import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime
import PostgresNIO

/// Turns whatever a route family's handlers throw into that family's error answer: an
/// ``APIFailure`` as it says, a body over the limit as 413, a value the database cannot store as
/// 400, a database that does not answer as 503, anything else as 500 with the error logged
/// (never echoed: it could hold a value).
struct ErrorBoundary: RouterMiddleware {
    typealias Context = APIContext
    let maxBodyBytes: Int
    /// The family's answer to a failure; nil: an internal error (500).
    let render: @Sendable (APIFailure?, _ path: String) -> any HTTPResponseError

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        do {
            do {
                do {
                    return try await next(request, context)
                } catch let generated as ServerError {
                    // A generated `/v1` route's failure, told as herald-api tells its own.
                    throw generated.cause
                }
            } catch let wrapped as PostgresTransactionError {
                // What a handler threw inside a transaction (a broker 503 while a Verify send is
                // recorded), or the database's own error: answered as itself.
                throw wrapped.failure ?? wrapped
            }
        } catch let failure as APIFailure {
            throw render(failure, request.uri.path)
        } catch is NIOTooManyBytesError {
            throw render(.bodyTooLarge(limit: maxBodyBytes), request.uri.path)
        } catch let error as any HTTPResponseError {
            throw error
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "22021" {
            // A value text cannot hold (U+0000) that a route passed on: the request's mistake.
            throw render(.invalid(field: nil, reason: "a value holds a character that is not allowed (U+0000)"), request.uri.path)
        } catch is PSQLError {
            context.logger.error("database error", metadata: ["path": "\(context.endpointPath ?? "-")"])
            throw render(.databaseUnavailable, request.uri.path)
        } catch is PostgresDecodingError {
            context.logger.error("database answer not understood", metadata: ["path": "\(context.endpointPath ?? "-")"])
            throw render(nil, request.uri.path)
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(context.endpointPath ?? "-")", "error": "\(type(of: error))"])
            throw render(nil, request.uri.path)
        }
    }
}

extension ServerError {
    /// What a generated `/v1` route failed on, as herald-api answers it: the handler's own error
    /// as it threw it (a record Herald cannot read back is its own mistake: 500); the generated
    /// decoding's refusal of the request, before any handler ran, as ``APIFailure/invalid``
    /// naming the field (``V1DecodingFailure``); any other refusal of the request by the runtime
    /// (a parameter of the wrong form) as a 400 naming no value.
    var cause: any Error {
        // No input: refused by the runtime's own reading of the request.
        guard operationInput == nil else { return underlyingError }
        if let decoding = underlyingError as? DecodingError { return V1DecodingFailure.failure(decoding) }
        if httpStatus.kind == .clientError {
            return APIFailure.invalid(field: nil, reason: "the request does not match docs/openapi.yaml (\(httpStatus.code))")
        }
        return underlyingError
    }
}
