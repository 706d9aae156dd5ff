import Crypto
import Foundation
import HeraldClient
import HeraldRuntime
import HeraldSMS
import HTTPTypes
import Hummingbird

/// `/v1/sms/verifications`: start (answered with herald-sms's decision), check a code, read the
/// state (masked, as `heraldctl verify show-sms`).
struct SMSRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("verifications", use: start)
        group.post("verifications/{id}/check", use: check)
        group.get("verifications/{id}", use: show)
    }

    static let startFields: Set<String> = ["verification_id", "phone_number", "purpose", "locale", "force_resend", "app_verification", "client",
                                           "code_length", "code_ttl_seconds", "channel", "channels", "client_ip"]

    /// Answers with herald-sms's decision (``V1StartAnswer``); a retried id already decided is
    /// answered from its record without a second job.
    func start(_ request: Request, context: APIContext) async throws -> Response {
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: Self.startFields)
        let id = try IdempotencyKey.id(body.string("verification_id", maxLength: 128), field: "verification_id", request, context, route: "sms")
        var appVerification: SMSVerificationJob.AppVerification?
        if let proof = try body.object("app_verification", allowed: ["receipt", "app_id", "captcha"]) {
            appVerification = try Self.appVerification(proof)
        }
        let client = try body.object("client", allowed: ["app_id"])
        let ip = try context.endUserIP(named: body.string("client_ip", maxLength: 45), field: "client_ip")
        let job = try JSONFields.validated(SMSVerificationJob(
            verificationID: id, phoneNumber: try body.required("phone_number", maxLength: 32),
            locale: try body.string("locale", maxLength: 35), purpose: try body.choice("purpose", SMSVerificationJob.Purpose.self) ?? .signIn,
            forceResend: try body.bool("force_resend") ?? false,
            client: .init(ip: ip?.description, appID: try client?.string("app_id", maxLength: 256)),
            appVerification: appVerification,
            codeLength: try body.int("code_length", range: 4...10), codeTTLSeconds: try body.int("code_ttl_seconds", range: 60...86_400),
            channel: try body.choice("channel", SMSVerificationJob.Channel.self),
            channels: try body.choices("channels", SMSVerificationJob.Channel.self, maxCount: SMSVerificationJob.Channel.allCases.count)))
        if let (decided, phone, purpose) = try await SMSVerificationRecord.decision(id, client: dependencies.database, logger: context.logger) {
            // The same id is the same job: another number or purpose under it would never be sent.
            guard phone == job.phoneNumber, purpose == job.purpose.rawValue else {
                throw APIFailure.invalid(field: "verification_id", reason: "verification_id already names a verification of another number or purpose")
            }
            dependencies.metrics.startAnswered(decided.status.rawValue)
            return try V1StartAnswer.response(.decided(decided), idKey: "verification_id", id: id)
        }
        let answer = try await dependencies.starts.start(job, messageID: id, correlationID: request.headers[.correlationID], logger: context.logger)
        return try V1StartAnswer.response(answer, idKey: "verification_id", id: id)
    }

    /// `app_verification`: a push receipt and app id, or a captcha token (the job's rule refuses both or neither).
    static func appVerification(_ proof: JSONFields) throws -> SMSVerificationJob.AppVerification {
        var captcha: SMSVerificationJob.AppVerification.Captcha?
        if let fields = try proof.object("captcha", allowed: ["provider", "token"]) {
            captcha = .init(provider: try fields.requiredChoice("provider", SMSVerificationJob.AppVerification.Provider.self),
                            token: try fields.required("token", maxLength: SMSVerificationJob.AppVerification.maxTokenLength))
        }
        let appID = try proof.string("app_id", maxLength: 255)
        if appID?.isEmpty == true { throw APIFailure.invalid(field: "app_verification.app_id", reason: "app_verification.app_id must not be empty") }
        return .init(receipt: try proof.string("receipt", maxLength: 128), appID: appID, captcha: captcha)
    }

    func check(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.require("id")
        let body = try await JSONFields.read(request, limit: dependencies.api.maxBodyBytes, allowed: ["code"])
        let code = try body.required("code", maxLength: 32)
        let result = try await dependencies.verification.verifyPhone(verificationID: id, code: code, logger: context.logger)
        var out: [String: Any] = ["verification_id": id]
        var headers = HTTPFields()
        var status = HTTPResponse.Status.ok
        switch result {
        case .verified(let phone, let purpose):
            out["result"] = "verified"
            out["phone_number"] = phone
            out["purpose"] = purpose.rawValue
        case .wrongCode(let left):
            out["result"] = "wrong_code"
            out["attempts_left"] = left
        case .expired: out["result"] = "expired"
        case .tooManyAttempts: out["result"] = "too_many_attempts"
        case .alreadyUsed: out["result"] = "already_used"
        case .notFound:
            out["result"] = "not_found"
            status = .notFound
        case .lockedOut(let seconds):
            out["result"] = "locked_out"
            out["retry_after_seconds"] = seconds
            headers[.retryAfter] = String(seconds)
        }
        return JSONResponse.make(status, out, headers: headers)
    }

    func show(_ request: Request, context: APIContext) async throws -> Response {
        let id = try context.parameters.require("id")
        guard let state = try await SMSVerificationRecord.json(id, client: dependencies.database, logger: context.logger) else {
            throw APIFailure.notFound("SMS verification")
        }
        return JSONResponse.raw(.ok, state)
    }
}

/// An `Idempotency-Key` header as the request's id: the same key of the same API key names the
/// same job (its message id), so a retried request is handled once.
enum IdempotencyKey {
    /// The request's id: the one its body gives (`field`), else the one its `Idempotency-Key`
    /// derives, else a new one. A malformed `Idempotency-Key` is refused even when the body gives
    /// the id; so is a given id in Herald's own namespaces (``reservedPrefixes``).
    static func id(_ given: String?, field: String, _ request: Request, _ context: APIContext, route: String) throws -> String {
        let derived = try derive(request.headers[.idempotencyKey], key: context.requireKey().id, route: route)
        if let given, let prefix = reservedPrefixes.first(where: { given.hasPrefix($0) }) {
            throw APIFailure.invalid(field: field, reason: "\(field) must not start with '\(prefix)': ids of that form are Herald's own")
        }
        return given ?? derived ?? RandomID.uuid()
    }

    /// The message ids Herald makes itself: a fallback step's job (`fb-`), a delivery receipt's
    /// (`rcpt-`), one an `Idempotency-Key` derives (`idem-`). A client that named one first would
    /// have its job run in their place (the job ledger runs a message id once).
    static let reservedPrefixes = ["fb-", "rcpt-", "idem-"]

    static func derive(_ header: String?, key: String, route: String) throws -> String? {
        guard let header else { return nil }
        guard (1...255).contains(header.utf8.count), header.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
            throw APIFailure.invalid(field: "Idempotency-Key", reason: "Idempotency-Key must be 1 to 255 printable ASCII characters")
        }
        return "idem-" + String(SHA256Hex.of("\(key)\u{0}\(route)\u{0}\(header)").prefix(40))
    }
}

extension HTTPField.Name {
    static let correlationID = HTTPField.Name("X-Correlation-ID")!
}
