import Foundation
import HeraldClient
import HeraldRuntime
import HeraldWire

/// `/v1/push`: app verification by silent push (start, confirm the secret the app received),
/// and a device token the app registered again.
extension V1API {
    func startPushVerification(_ input: Operations.StartPushVerification.Input) async throws -> Operations.StartPushVerification.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let receipt = try IdempotencyKey.id(FieldRule.text(body.receipt, "receipt", maxLength: 128), field: "receipt",
                                            header: try headers[.idempotencyKey], key: context.requireKey(), route: "push")
        let job = try JSONFields.validated(PushVerificationJob(
            receipt: receipt, deviceToken: try FieldRule.required(body.deviceToken, "device_token", maxLength: 4096),
            platform: try FieldRule.requiredChoice(body.platform.rawValue, "platform", PushVerificationJob.Platform.self),
            environment: try FieldRule.choice(body.environment?.rawValue, "environment", PushVerificationJob.Environment.self) ?? .production,
            appID: try FieldRule.required(body.appId, "app_id", maxLength: 256),
            timeoutSeconds: try FieldRule.int(body.timeoutSeconds, "timeout_seconds", range: 1...86_400)))
        try await dependencies.publisher.enqueue(job, messageID: receipt, correlationID: try headers[.correlationID], logger: context.logger)
        return .accepted(.init(body: .json(.init(receipt: receipt, status: "queued"))))
    }

    func confirmPushVerification(_ input: Operations.ConfirmPushVerification.Input) async throws -> Operations.ConfirmPushVerification.Output {
        let context = try context
        let receipt = try context.parameters.require("receipt")
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let secret = try FieldRule.required(body.secret, "secret", maxLength: 512)
        let result = try await dependencies.verification.confirmAppVerification(receipt: receipt, secret: secret, logger: context.logger)
        let confirmed: Components.Schemas.PushConfirmResult
        switch result {
        case .verified(let appID, let platform):
            confirmed = .PushConfirmVerified(.init(receipt: receipt, result: "verified", appId: appID,
                                                   platform: try Self.generated(platform.rawValue, as: Components.Schemas.PushConfirmVerified.PlatformPayload.self)))
        case .mismatch: confirmed = .PushConfirmNotVerified(.init(receipt: receipt, result: .mismatch))
        case .expired: confirmed = .PushConfirmNotVerified(.init(receipt: receipt, result: .expired))
        case .alreadyUsed: confirmed = .PushConfirmNotVerified(.init(receipt: receipt, result: .alreadyUsed))
        case .notFound: return .notFound(.init(body: .json(.init(receipt: receipt, result: "not_found"))))
        }
        return .ok(.init(body: .json(confirmed)))
    }

    func deviceTokenRegistered(_ input: Operations.DeviceTokenRegistered.Input) async throws -> Operations.DeviceTokenRegistered.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let platform = try FieldRule.requiredChoice(body.platform.rawValue, "platform", PushVerificationJob.Platform.self)
        let token = try FieldRule.required(body.token, "token", maxLength: 4096)
        let at = min(body.registeredAt?.date ?? Date(), Date())
        let changed = try await dependencies.verification.deviceTokenRegistered(platform: platform, token: token, at: at, logger: context.logger)
        return .ok(.init(body: .json(.init(changed: changed))))
    }
}
