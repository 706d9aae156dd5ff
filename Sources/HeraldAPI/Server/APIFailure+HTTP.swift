import HTTPTypes

extension APIFailure {
    var status: HTTPResponse.Status {
        switch self {
        case .invalid: .badRequest
        case .bodyTooLarge: .contentTooLarge
        case .unauthenticated, .forgedCallback: .unauthorized
        case .forbidden: .forbidden
        case .rateLimited: .tooManyRequests
        case .notFound: .notFound
        case .brokerUnavailable, .databaseUnavailable, .upstreamUnavailable: .serviceUnavailable
        }
    }
}

extension HTTPField.Name {
    static let retryAfter = HTTPField.Name("Retry-After")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let correlationID = HTTPField.Name("X-Correlation-ID")!
}
