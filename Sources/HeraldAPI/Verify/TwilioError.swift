import HTTPTypes
import Hummingbird

/// Twilio's error body, `{"code", "message", "more_info", "status"}` (never RFC 9457's four
/// keys: Twilio's Python library would raise another exception class), with Twilio's codes
/// where Herald's behaviour is the one Twilio documents.
struct TwilioError: HTTPResponseError {
    let code: Int
    let status: HTTPResponse.Status
    let message: String
    var retryAfter: Int?

    static func maxCheckAttempts(retryAfter: Int? = nil) -> TwilioError {
        TwilioError(code: 60202, status: .tooManyRequests, message: "Max check attempts reached", retryAfter: retryAfter)
    }
    static let maxSendAttempts = TwilioError(code: 60203, status: .tooManyRequests, message: "Max send attempts reached")
    static let landline = TwilioError(code: 60205, status: .forbidden, message: "SMS is not supported by landline phone number")
    static func channelNotSupported(_ channel: String) -> TwilioError {
        TwilioError(code: 60223, status: .badRequest, message: "Delivery channel disabled: '\(channel)' is not offered by this Herald (only sms)")
    }
    static func blocked(_ reason: String) -> TwilioError {
        TwilioError(code: 60410, status: .forbidden, message: "Verification delivery attempt blocked: \(reason)")
    }
    static func notFound(_ path: String) -> TwilioError {
        TwilioError(code: 20404, status: .notFound, message: "The requested resource \(path) was not found")
    }
    static func invalid(_ parameter: String, _ reason: String? = nil) -> TwilioError {
        TwilioError(code: 60200, status: .badRequest, message: "Invalid parameter: \(parameter)" + (reason.map { " (\($0))" } ?? ""))
    }

    /// The Twilio answer to one of herald-api's own failures (nil: an internal error).
    init(_ failure: APIFailure?, path: String) {
        switch failure {
        case .invalid(let field, let reason): self = .invalid(field ?? "body", reason)
        case .bodyTooLarge: self.init(code: 60200, status: .contentTooLarge, message: failure!.message)
        case .unauthenticated, .forgedCallback: self.init(code: 20003, status: .unauthorized, message: "Authenticate")
        case .forbidden: self.init(code: 20403, status: .forbidden, message: failure!.message)
        case .rateLimited(let seconds): self.init(code: 20429, status: .tooManyRequests, message: "Too Many Requests", retryAfter: seconds)
        case .notFound: self = .notFound(path)
        case .brokerUnavailable(let seconds): self.init(code: 20503, status: .serviceUnavailable, message: "Service unavailable: \(failure!.message)", retryAfter: seconds)
        case .databaseUnavailable, .upstreamUnavailable: self.init(code: 20503, status: .serviceUnavailable, message: "Service unavailable", retryAfter: failure!.retryAfter)
        case nil: self.init(code: 20500, status: .internalServerError, message: "Internal server error")
        }
    }

    init(code: Int, status: HTTPResponse.Status, message: String, retryAfter: Int? = nil) {
        self.code = code
        self.status = status
        self.message = message
        self.retryAfter = retryAfter
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = HTTPFields()
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if code == 20003 { headers[.wwwAuthenticate] = #"Basic realm="Twilio API""# }
        return JSONResponse.make(status, [
            "code": code, "message": message, "more_info": "https://www.twilio.com/docs/errors/\(code)", "status": Int(status.code),
        ], headers: headers)
    }
}
