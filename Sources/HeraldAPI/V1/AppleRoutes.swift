import Foundation
import HeraldApple
import HeraldClient
import HeraldRuntime
import HTTPTypes
import Hummingbird

/// `/v1/apple`: check an identity token with its raw nonce; hand herald-apple an authorization
/// code to exchange (and keep the refresh token it gets, sealed, for revocation).
struct AppleRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("identity-tokens/verify", use: verify)
        group.post("authorization-codes", use: store)
    }

    func verify(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["identity_token", "raw_nonce"])
        let token = try body.required("identity_token", maxLength: 8192)
        let nonce = try body.required("raw_nonce", maxLength: 512)
        do {
            let identity = try await dependencies.apple.verifyIdentityToken(token, rawNonce: nonce)
            var out: [String: Any] = ["result": "verified", "sub": identity.subject, "client_id": identity.clientID,
                                      "issued_at": JSONResponse.timestamp(identity.issuedAt), "expires_at": JSONResponse.timestamp(identity.expiresAt)]
            out["email"] = identity.email
            out["email_verified"] = identity.emailVerified
            out["is_private_email"] = identity.isPrivateEmail
            out["real_user_status"] = identity.realUserStatus?.rawValue
            return JSONResponse.make(.ok, out)
        } catch {
            if case .keysUnavailable = error { throw APIFailure.upstreamUnavailable("Apple's key set") }
            return JSONResponse.make(.ok, ["result": "refused", "reason": error.code])
        }
    }

    func store(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["account_id", "client_id", "authorization_code"])
        let job = try JSONFields.validated(AppleTokenJob(
            accountID: try body.required("account_id", maxLength: 128), clientID: try body.required("client_id", maxLength: 256),
            authorizationCode: try body.required("authorization_code", maxLength: 1024)))
        let id = try IdempotencyKey.id(nil, field: "Idempotency-Key", request, context, route: "apple")
        try await dependencies.publisher.enqueue(job, messageID: id, correlationID: request.headers[.correlationID], logger: context.logger)
        return JSONResponse.make(.accepted, ["message_id": id, "status": "queued"])
    }
}
