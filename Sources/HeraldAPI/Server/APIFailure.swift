/// Why herald-api refused or could not answer a request, before it is written in the dialect of
/// its route family (``V1Error`` for `/v1`, ``TwilioError`` for `/v2`). Reasons name the
/// field, never its value.
public enum APIFailure: Error, Sendable, Equatable {
    /// The body or a parameter is wrong (400): `field` names it.
    case invalid(field: String?, reason: String)
    /// The body is larger than `api.max_body_bytes` (413).
    case bodyTooLarge(limit: Int)
    /// No credentials, or credentials that are unknown, wrong, revoked or expired (401).
    case unauthenticated
    /// A provider's callback whose signature does not hold, is missing, or is too old (401).
    case forgedCallback
    /// The key lacks the route's scope (403).
    case forbidden(scope: String)
    /// The key's request rate is spent (429).
    case rateLimited(retryAfterSeconds: Int)
    /// No such resource (404).
    case notFound(String)
    /// The broker did not confirm the job in time, or is not connected (503, nothing lost).
    case brokerUnavailable(retryAfterSeconds: Int)
    /// The database did not answer (503).
    case databaseUnavailable
    /// A remote party the answer needs did not answer (Apple's key set) (503).
    case upstreamUnavailable(String)

    var retryAfter: Int? {
        switch self {
        case .rateLimited(let seconds), .brokerUnavailable(let seconds): seconds
        case .databaseUnavailable: 1
        case .upstreamUnavailable: 5
        default: nil
        }
    }

    /// A field name as a refusal may carry it: at most 64 printable ASCII characters of it
    /// (a name comes from the client and goes into an answer and a log line).
    static func printableName(_ name: some StringProtocol) -> String {
        String(name.prefix(64).unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
    }

    var message: String {
        switch self {
        case .invalid(let field, let reason): field.map { reason.contains($0) ? reason : "\($0): \(reason)" } ?? reason
        case .bodyTooLarge(let limit): "the body is larger than \(limit) bytes (api.max_body_bytes)"
        case .unauthenticated: "authentication required: HTTP Basic with an API key id and secret (or Bearer id.secret on /v1)"
        case .forgedCallback: "the callback's signature is missing, wrong or too old"
        case .forbidden(let scope): "this API key lacks the '\(scope)' scope"
        case .rateLimited: "too many requests for this API key"
        case .notFound(let what): "\(what) not found"
        case .brokerUnavailable: "the broker did not confirm the job; nothing was enqueued that a retry would duplicate: retry with the same id"
        case .databaseUnavailable: "the database did not answer; retry"
        case .upstreamUnavailable(let what): "\(what) did not answer; retry"
        }
    }
}
