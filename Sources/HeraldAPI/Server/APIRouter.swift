import HeraldAPIStore
import HeraldRuntime
import HTTPTypes
import Hummingbird
import NIOCore

/// The routes of herald-api: `/v1` (JSON, Basic or Bearer) and `/v2` (Twilio Verify, form
/// bodies, Basic), each family behind its metrics, its error dialect and, per route group,
/// the API key's scope. A request no route takes answers 404 in its family's dialect.
enum APIRouter {
    static func make(_ dependencies: APIDependencies) throws -> Router<APIContext> {
        let router = Router(context: APIContext.self)
        // First: the span of a request holds everything the request does (a no-op when tracing is off).
        router.add(middleware: RequestTracing())
        let api = dependencies.api
        let limiter = KeyRateLimiter(perSecond: api.keyRatePerSecond, burst: api.keyRateBurst)
        let failures = KeyRateLimiter(perSecond: api.authFailureRatePerSecond, burst: api.authFailureBurst)
        let addresses = ClientAddress(trusted: api.trustedProxies.compactMap { CIDRBlock($0) })
        func authenticator(_ scope: APIScope, bearer: Bool) -> KeyAuthenticator {
            KeyAuthenticator(keys: dependencies.keys, scope: scope, allowBearer: bearer, limiter: limiter, failures: failures, addresses: addresses, metrics: dependencies.metrics)
        }

        // docs/openapi.yaml, embedded by the EmbedFiles plugin (Documents/openapi.yaml links to it).
        guard let text = EmbeddedDocuments.files["openapi.yaml"], !text.isEmpty else { throw APIRouterError.documentMissing }
        let document = ByteBuffer(string: text)
        router.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: document))
        }

        let v1 = router.group("v1")
            .add(middleware: RequestMetrics(family: "v1", metrics: dependencies.metrics))
            .add(middleware: ErrorBoundary(maxBodyBytes: api.maxBodyBytes) { failure, _ in V1Error(failure: failure) })
        // The generated routes (docs/openapi.yaml), each family behind its key's scope.
        let families: [(String, APIScope)] = [("sms", .sms), ("email", .email), ("push", .push), ("apple", .apple), ("accounts", .accounts)]
        try V1API.register(dependencies, families: Dictionary(uniqueKeysWithValues: families.map { name, scope in
            (name, v1.group(RouterPath(name)).add(middleware: authenticator(scope, bearer: true)).add(middleware: V1Request.Scope(maxBodyBytes: api.maxBodyBytes)))
        }))
        // Providers' callbacks: no API key, each checked by the provider's own signature.
        ReceiptRoutes(dependencies: dependencies, addresses: addresses).add(to: v1.group("receipts"))

        let v2 = router.group("v2")
            .add(middleware: RequestMetrics(family: "verify", metrics: dependencies.metrics))
            .add(middleware: ErrorBoundary(maxBodyBytes: api.maxBodyBytes) { failure, path in TwilioError(failure, path: path) })
            .add(middleware: authenticator(.verify, bearer: false))
        ServiceRoutes(dependencies: dependencies).add(to: v2)
        VerificationRoutes(dependencies: dependencies).add(to: v2)
        // Last: a router's middleware wraps the routes added after it, and its not-found responder.
        router.add(middleware: UnmatchedRoute())
        return router
    }
}

/// herald-api built without its OpenAPI document: it stops at start rather than serve an empty one.
enum APIRouterError: Error, CustomStringConvertible {
    case documentMissing
    var description: String { "herald-api was built without docs/openapi.yaml (Sources/HeraldAPI/Documents/openapi.yaml, the EmbedFiles plugin)" }
}
