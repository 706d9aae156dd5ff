import Foundation
import HeraldClient
import HeraldPush
import HeraldRuntime
import HTTPTypes
import Hummingbird

/// `/v1/push`: app verification by silent push (start, confirm the secret the app received),
/// and a device token the app registered again.
struct PushRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("verifications", use: start)
        group.post("verifications/{receipt}/confirm", use: confirm)
        group.post("device-tokens", use: registered)
    }

    func start(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes,
                                             allowed: ["receipt", "device_token", "platform", "environment", "app_id", "timeout_seconds"])
        let receipt = try IdempotencyKey.id(body.string("receipt", maxLength: 128), field: "receipt", request, context, route: "push")
        let platform = try body.requiredChoice("platform", PushVerificationJob.Platform.self)
        let job = try JSONFields.validated(PushVerificationJob(
            receipt: receipt, deviceToken: try body.required("device_token", maxLength: 4096), platform: platform,
            environment: try body.choice("environment", PushVerificationJob.Environment.self) ?? .production,
            appID: try body.required("app_id", maxLength: 256), timeoutSeconds: try body.int("timeout_seconds", range: 1...86_400)))
        try await dependencies.publisher.enqueue(job, messageID: receipt, correlationID: request.headers[.correlationID], logger: context.logger)
        return JSONResponse.make(.accepted, ["receipt": receipt, "status": "queued"])
    }

    func confirm(_ request: Request, context: APIContext) async throws -> Response {
        let receipt = try context.parameters.require("receipt")
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["secret"])
        let secret = try body.required("secret", maxLength: 512)
        let result = try await dependencies.verification.confirmAppVerification(receipt: receipt, secret: secret, logger: context.logger)
        switch result {
        case .verified(let appID, let platform):
            return JSONResponse.make(.ok, ["receipt": receipt, "result": "verified", "app_id": appID, "platform": platform.rawValue])
        case .mismatch: return JSONResponse.make(.ok, ["receipt": receipt, "result": "mismatch"])
        case .expired: return JSONResponse.make(.ok, ["receipt": receipt, "result": "expired"])
        case .alreadyUsed: return JSONResponse.make(.ok, ["receipt": receipt, "result": "already_used"])
        case .notFound: return JSONResponse.make(.notFound, ["receipt": receipt, "result": "not_found"])
        }
    }

    func registered(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["platform", "token", "registered_at"])
        let platform = try body.requiredChoice("platform", PushVerificationJob.Platform.self)
        let token = try body.required("token", maxLength: 4096)
        var at = Date()
        if let text = try body.string("registered_at", maxLength: 40) {
            guard let parsed = RFC3339Time.parse(text) else {
                throw APIFailure.invalid(field: "registered_at", reason: "registered_at must be an RFC 3339 time (2026-01-02T03:04:05Z)")
            }
            at = min(parsed, Date())
        }
        let changed = try await dependencies.verification.deviceTokenRegistered(platform: platform, token: token, at: at, logger: context.logger)
        return JSONResponse.make(.ok, ["changed": changed])
    }
}
