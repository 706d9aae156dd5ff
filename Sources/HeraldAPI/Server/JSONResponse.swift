import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON answers: sorted keys, slashes as they are, `Content-Type: application/json`.
enum JSONResponse {
    static func make(_ status: HTTPResponse.Status = .ok, _ object: [String: Any], headers: HTTPFields = [:]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A JSON object already written.
    static func raw(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The ISO 8601 form Twilio's libraries parse: whole seconds, `Z`.
    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// `/v1`'s errors: `{"error": {"code", "message", "field"?}}`, `Retry-After` where one applies.
struct V1Error: HTTPResponseError {
    /// Nil: an internal error (500), told no more.
    let failure: APIFailure?
    var status: HTTPResponse.Status { failure?.status ?? .internalServerError }

    var code: String {
        guard let failure else { return "internal" }
        return switch failure {
        case .invalid: "invalid_request"
        case .bodyTooLarge: "body_too_large"
        case .unauthenticated: "unauthenticated"
        case .forgedCallback: "bad_signature"
        case .forbidden: "forbidden"
        case .rateLimited: "rate_limited"
        case .notFound: "not_found"
        case .brokerUnavailable: "broker_unavailable"
        case .databaseUnavailable: "database_unavailable"
        case .upstreamUnavailable: "upstream_unavailable"
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var error: [String: Any] = ["code": code, "message": failure?.message ?? "internal error"]
        if case .invalid(let field?, _) = failure { error["field"] = field }
        var headers = HTTPFields()
        if let seconds = failure?.retryAfter { headers[.retryAfter] = String(seconds) }
        if case .unauthenticated = failure { headers[.wwwAuthenticate] = #"Basic realm="herald", Bearer realm="herald""# }
        return JSONResponse.make(status, ["error": error], headers: headers)
    }
}
