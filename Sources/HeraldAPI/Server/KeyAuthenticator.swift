import Foundation
import HeraldAPIStore
import HeraldRuntime
import HTTPTypes
import Hummingbird
import Logging

/// Authenticates every request of a route family with an API key: HTTP Basic (key id and
/// secret: Twilio's libraries send the account SID and auth token so), or on `/v1` also
/// `Authorization: Bearer <id>.<secret>`. Then the key's scope, its request rate, and the
/// client's IP. A Twilio client may name the key `AC…` (Twilio's account SID prefix, which its
/// Node library insists on) for `HK…`.
struct KeyAuthenticator: RouterMiddleware {
    typealias Context = APIContext
    let keys: KeyCache
    let scope: APIScope
    let allowBearer: Bool
    let limiter: KeyRateLimiter
    /// Refused authentications per source: spent, a source is refused before any database read or HMAC.
    let failures: KeyRateLimiter
    let addresses: ClientAddress
    let metrics: APIMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let (id, secret) = credentials(request.headers[.authorization]) else {
            metrics.refusedAuth("missing")
            throw APIFailure.unauthenticated
        }
        let clientIP = addresses.resolve(peer: context.peer, forwardedFor: request.headers[values: .forwardedFor])
        let source = clientIP?.limitKey(ipv6PrefixLength: 64) ?? "unknown"
        // A source whose refusals spent its budget reads no key any more; a key kept in memory
        // costs no read, and is judged (a front API's valid key is not refused for another's mistakes).
        if !keys.isKept(id), let wait = failures.wait(source) {
            metrics.refusedAuth("rate_limited")
            throw APIFailure.rateLimited(retryAfterSeconds: wait)
        }
        let key: APIKey
        switch try await keys.check(id: id, secret: secret, logger: context.logger) {
        case .valid(let valid): key = valid
        case .refused(let why):
            _ = failures.take(source)
            metrics.refusedAuth(why.rawValue)
            context.logger.notice("API key refused", metadata: ["key": "\(id.prefix(40))", "why": "\(why.rawValue)"])
            throw APIFailure.unauthenticated
        }
        guard key.allows(scope) else { throw APIFailure.forbidden(scope: scope.rawValue) }
        if let wait = limiter.take(key.id) {
            metrics.rateLimited()
            throw APIFailure.rateLimited(retryAfterSeconds: wait)
        }
        var context = context
        context.key = key
        context.clientIP = clientIP
        context.logger[metadataKey: "api_key"] = "\(key.id)"
        return try await next(request, context)
    }

    /// The key id and secret of an `Authorization` header, or nil.
    func credentials(_ header: String?) -> (String, Secret)? {
        guard let header else { return nil }
        if header.count > 7, header.prefix(6).lowercased() == "basic " {
            guard let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
            return (Self.keyID(String(text[..<colon])), Secret(String(text[text.index(after: colon)...])))
        }
        if allowBearer, header.count > 8, header.prefix(7).lowercased() == "bearer " {
            let token = header.dropFirst(7).trimmingCharacters(in: .whitespaces)
            guard let dot = token.firstIndex(of: ".") else { return nil }
            return (Self.keyID(String(token[..<dot])), Secret(String(token[token.index(after: dot)...])))
        }
        return nil
    }

    static func keyID(_ user: String) -> String {
        user.hasPrefix("AC") && user.utf8.count == 34 ? "HK" + user.dropFirst(2) : user
    }
}
