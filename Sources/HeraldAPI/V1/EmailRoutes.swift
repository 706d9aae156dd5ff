import Foundation
import HeraldClient
import HeraldEmail
import HeraldRuntime
import HTTPTypes
import Hummingbird

/// `/v1/email/actions`: send an email action (sign-in link, verify, reset, change, recover),
/// answered with herald-email's decision, and consume its link code.
struct EmailRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("actions", use: send)
        group.post("actions/consume", use: consume)
    }

    static let settingsFields: Set<String> = ["url", "handle_code_in_app", "ios_bundle_id", "android_package_name", "android_install_app",
                                              "android_minimum_version", "link_domain"]

    func send(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes,
                                             allowed: ["request_id", "email", "mode", "old_email", "locale", "action_code_settings", "client_ip"])
        let id = try IdempotencyKey.id(body.string("request_id", maxLength: 128), field: "request_id", request, context, route: "email")
        let mode = try body.requiredChoice("mode", EmailActionJob.Mode.self)
        // herald-email sends the recover_email notice itself, when a change link is used.
        guard mode != .recoverEmail else {
            throw APIFailure.invalid(field: "mode", reason: "mode recover_email is sent by Herald when a verify_and_change_email link is used, never requested")
        }
        let settings = try body.requiredObject("action_code_settings", allowed: Self.settingsFields)
        let ip = try context.endUserIP(named: body.string("client_ip", maxLength: 45), field: "client_ip")
        let job = try JSONFields.validated(EmailActionJob(
            requestID: id, email: try body.required("email", maxLength: 254), mode: mode,
            oldEmail: try body.string("old_email", maxLength: 254), locale: try body.string("locale", maxLength: 35),
            actionCodeSettings: .init(
                url: try settings.required("url", maxLength: 2048), handleCodeInApp: try settings.bool("handle_code_in_app") ?? true,
                iosBundleID: try settings.string("ios_bundle_id"), androidPackageName: try settings.string("android_package_name"),
                androidInstallApp: try settings.bool("android_install_app"), androidMinimumVersion: try settings.string("android_minimum_version", maxLength: 32),
                linkDomain: try settings.string("link_domain")),
            client: .init(ip: ip?.description)))
        let answer = try await dependencies.starts.start(job, messageID: id, correlationID: request.headers[.correlationID], logger: context.logger)
        return try V1StartAnswer.response(answer, idKey: "request_id", id: id)
    }

    func consume(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["email", "oob_code", "mode"])
        let email = try body.required("email", maxLength: 254)
        let code = try body.required("oob_code", maxLength: 512)
        let mode = try body.choice("mode", EmailActionJob.Mode.self) ?? .signIn
        let result = try await dependencies.verification.consumeEmailAction(mode, email: email, oobCode: code, logger: context.logger)
        var status = HTTPResponse.Status.ok
        var out: [String: Any]
        switch result {
        case .success(let email, let mode, let continueURL, let settings):
            out = ["result": "success", "email": email, "mode": mode.rawValue, "continue_url": continueURL, "settings": Self.render(settings)]
        case .recovered(let email, let changedTo, let continueURL, let settings):
            out = ["result": "recovered", "email": email, "changed_to": changedTo, "continue_url": continueURL, "settings": Self.render(settings)]
        case .emailMismatch: out = ["result": "email_mismatch"]
        case .expired: out = ["result": "expired"]
        case .alreadyUsed: out = ["result": "already_used"]
        case .superseded: out = ["result": "superseded"]
        case .notFound:
            out = ["result": "not_found"]
            status = .notFound
        }
        return JSONResponse.make(status, out)
    }

    static func render(_ settings: EmailLinkVerifier.Settings) -> [String: Any] {
        var out: [String: Any] = ["url": settings.url, "link_domain": settings.linkDomain, "handle_code_in_app": settings.handleCodeInApp]
        out["ios_bundle_id"] = settings.iosBundleID
        out["android_package_name"] = settings.androidPackageName
        out["android_install_app"] = settings.androidInstallApp
        out["android_minimum_version"] = settings.androidMinimumVersion
        return out
    }
}
