import Foundation
import HeraldAppleCheck
import HeraldClient
import HeraldRuntime
import HeraldWire

/// `/v1/apple`: check an identity token with its raw nonce; hand herald-apple an authorization
/// code to exchange (and keep the refresh token it gets, sealed, for revocation).
extension V1API {
    func verifyAppleIdentityToken(_ input: Operations.VerifyAppleIdentityToken.Input) async throws -> Operations.VerifyAppleIdentityToken.Output {
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let token = try FieldRule.required(body.identityToken, "identity_token", maxLength: 8192)
        let nonce = try FieldRule.required(body.rawNonce, "raw_nonce", maxLength: 512)
        let identity: AppleIdentity
        do {
            identity = try await dependencies.apple.verifyIdentityToken(token, rawNonce: nonce)
        } catch {
            if case .keysUnavailable = error { throw APIFailure.upstreamUnavailable("Apple's key set") }
            let reason = try Self.generated(error.code, as: Components.Schemas.AppleIdentityRefused.ReasonPayload.self)
            return .ok(.init(body: .json(.AppleIdentityRefused(.init(result: "refused", reason: reason)))))
        }
        let checked = Components.Schemas.AppleVerifyResult.AppleIdentityVerified(.init(
            result: "verified", sub: identity.subject, clientId: identity.clientID, issuedAt: identity.issuedAt, expiresAt: identity.expiresAt,
            email: identity.email, emailVerified: identity.emailVerified, isPrivateEmail: identity.isPrivateEmail,
            realUserStatus: try identity.realUserStatus.map { try Self.generated($0.rawValue, as: Components.Schemas.AppleIdentityVerified.RealUserStatusPayload.self) }))
        return .ok(.init(body: .json(checked)))
    }

    func storeAppleAuthorizationCode(_ input: Operations.StoreAppleAuthorizationCode.Input) async throws -> Operations.StoreAppleAuthorizationCode.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let job = try JSONFields.validated(AppleTokenJob(
            accountID: try FieldRule.required(body.accountId, "account_id", maxLength: 128),
            clientID: try FieldRule.required(body.clientId, "client_id", maxLength: 256),
            authorizationCode: try FieldRule.required(body.authorizationCode, "authorization_code", maxLength: 1024)))
        let id = try IdempotencyKey.id(nil, field: "Idempotency-Key", header: try headers[.idempotencyKey], key: context.requireKey(), route: "apple")
        try await dependencies.publisher.enqueue(job, messageID: id, correlationID: try headers[.correlationID], logger: context.logger)
        return .accepted(.init(body: .json(.init(messageId: id, status: "queued"))))
    }
}
