import Foundation
import HeraldClient
import HeraldEmailCheck
import HeraldRuntime
import HeraldWire

/// `/v1/email/actions`: send an email action (sign-in link, verify, reset, change, recover),
/// answered with herald-email's decision, and consume its link code.
extension V1API {
    typealias EmailSend = Operations.SendEmailAction

    func sendEmailAction(_ input: EmailSend.Input) async throws -> EmailSend.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let id = try IdempotencyKey.id(FieldRule.text(body.requestId, "request_id", maxLength: 128), field: "request_id",
                                       header: try headers[.idempotencyKey], key: context.requireKey(), route: "email")
        // The generated enum has no recover_email: herald-email sends that notice itself, when a change link is used.
        let mode = try FieldRule.requiredChoice(body.mode.rawValue, "mode", EmailActionJob.Mode.self)
        let settings = body.actionCodeSettings
        let ip = try context.endUserIP(named: FieldRule.text(body.clientIp, "client_ip", maxLength: 45), field: "client_ip")
        let job = try JSONFields.validated(EmailActionJob(
            requestID: id, email: try FieldRule.required(body.email, "email", maxLength: 254), mode: mode,
            oldEmail: try FieldRule.text(body.oldEmail, "old_email", maxLength: 254), locale: try FieldRule.text(body.locale, "locale", maxLength: 35),
            actionCodeSettings: .init(
                url: try FieldRule.required(settings.url, "action_code_settings.url", maxLength: 2048), handleCodeInApp: settings.handleCodeInApp ?? true,
                iosBundleID: try FieldRule.text(settings.iosBundleId, "action_code_settings.ios_bundle_id"),
                androidPackageName: try FieldRule.text(settings.androidPackageName, "action_code_settings.android_package_name"),
                androidInstallApp: settings.androidInstallApp,
                androidMinimumVersion: try FieldRule.text(settings.androidMinimumVersion, "action_code_settings.android_minimum_version", maxLength: 32),
                linkDomain: try FieldRule.text(settings.linkDomain, "action_code_settings.link_domain")),
            client: .init(ip: ip?.description)))
        let answer = try await dependencies.starts.start(job, messageID: id, correlationID: try headers[.correlationID], logger: context.logger)
        switch try V1StartAnswer<EmailSend.Output>.of(answer, id: id, key: .requestID) {
        case .going(let decision): return .ok(.init(body: .json(.init(requestId: id, status: .init(stringLiteral: decision.status.rawValue),
                                                                      channel: decision.channel.map { .init(stringLiteral: $0) }))))
        case .queued: return .accepted(.init(body: .json(.init(requestId: id, status: "queued"))))
        case .refused(let output): return output
        }
    }

    func consumeEmailAction(_ input: Operations.ConsumeEmailAction.Input) async throws -> Operations.ConsumeEmailAction.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let email = try FieldRule.required(body.email, "email", maxLength: 254)
        let code = try FieldRule.required(body.oobCode, "oob_code", maxLength: 512)
        let mode = try FieldRule.choice(body.mode?.rawValue, "mode", EmailActionJob.Mode.self) ?? .signIn
        let result = try await dependencies.verification.consumeEmailAction(mode, email: email, oobCode: code, logger: context.logger)
        let consumed: Components.Schemas.EmailConsumeResult
        switch result {
        case .success(let email, let mode, let continueURL, let settings):
            consumed = .EmailConsumeSuccess(.init(result: "success", email: email,
                                                  mode: try Self.generated(mode.rawValue, as: Components.Schemas.EmailConsumeSuccess.ModePayload.self),
                                                  continueUrl: continueURL, settings: Self.approved(settings)))
        case .recovered(let email, let changedTo, let continueURL, let settings):
            consumed = .EmailConsumeRecovered(.init(result: "recovered", email: email, changedTo: changedTo, continueUrl: continueURL, settings: Self.approved(settings)))
        case .emailMismatch: consumed = .EmailConsumeNotApplied(.init(result: .emailMismatch))
        case .expired: consumed = .EmailConsumeNotApplied(.init(result: .expired))
        case .alreadyUsed: consumed = .EmailConsumeNotApplied(.init(result: .alreadyUsed))
        case .superseded: consumed = .EmailConsumeNotApplied(.init(result: .superseded))
        case .notFound: return .notFound(.init(body: .json(.init(result: "not_found"))))
        }
        return .ok(.init(body: .json(consumed)))
    }

    static func approved(_ settings: EmailLinkVerifier.Settings) -> Components.Schemas.ApprovedSettings {
        .init(url: settings.url, linkDomain: settings.linkDomain, handleCodeInApp: settings.handleCodeInApp, iosBundleId: settings.iosBundleID,
              androidPackageName: settings.androidPackageName, androidInstallApp: settings.androidInstallApp, androidMinimumVersion: settings.androidMinimumVersion)
    }
}
