import Crypto
import Foundation
import HeraldAPIStore
import HeraldClient
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire

/// `/v1/sms/verifications`: start (answered with herald-sms's decision), check a code, read the
/// state (masked, as `heraldctl verify show-sms`).
extension V1API {
    typealias SMSStart = Operations.StartSMSVerification

    /// Answers with herald-sms's decision (``V1StartAnswer``); a retried id already decided is
    /// answered from its record without a second job.
    func startSMSVerification(_ input: SMSStart.Input) async throws -> SMSStart.Output {
        let context = try context
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let id = try IdempotencyKey.id(FieldRule.text(body.verificationId, "verification_id", maxLength: 128), field: "verification_id",
                                       header: try headers[.idempotencyKey], key: context.requireKey(), route: "sms")
        let ip = try context.endUserIP(named: FieldRule.text(body.clientIp, "client_ip", maxLength: 45), field: "client_ip")
        let job = try JSONFields.validated(SMSVerificationJob(
            verificationID: id, phoneNumber: try FieldRule.required(body.phoneNumber, "phone_number", maxLength: 32),
            locale: try FieldRule.text(body.locale, "locale", maxLength: 35),
            purpose: try FieldRule.choice(body.purpose?.rawValue, "purpose", SMSVerificationJob.Purpose.self) ?? .signIn,
            forceResend: body.forceResend ?? false,
            client: .init(ip: ip?.description, appID: try FieldRule.text(body.client?.appId, "client.app_id", maxLength: 256)),
            appVerification: try body.appVerification.map(Self.appVerification),
            codeLength: try FieldRule.int(body.codeLength, "code_length", range: 4...10),
            codeTTLSeconds: try FieldRule.int(body.codeTtlSeconds, "code_ttl_seconds", range: 60...86_400),
            channel: try FieldRule.choice(body.channel?.rawValue, "channel", SMSVerificationJob.Channel.self),
            channels: try Self.channels(body.channels?.map(\.rawValue))))
        let answer: JobStarts.Answer
        if let (decided, phone, purpose) = try await SMSVerificationRecord.decision(id, client: dependencies.database, logger: context.logger) {
            // The same id is the same job: another number or purpose under it would never be sent.
            guard phone == job.phoneNumber, purpose == job.purpose.rawValue else {
                throw APIFailure.invalid(field: "verification_id", reason: "verification_id already names a verification of another number or purpose")
            }
            dependencies.metrics.startAnswered(decided.status.rawValue)
            answer = .decided(decided)
        } else {
            answer = try await dependencies.starts.start(job, messageID: id, correlationID: try headers[.correlationID], logger: context.logger)
        }
        switch try V1StartAnswer<SMSStart.Output>.of(answer, id: id, key: .verificationID) {
        case .going(let decision):
            return .ok(.init(body: .json(.init(
                verificationId: id, status: try Self.generated(decision.status.rawValue, as: Components.Schemas.SMSVerificationDecision.StatusPayload.self),
                channel: try decision.channel.map { try Self.generated($0, as: Components.Schemas.SMSVerificationDecision.ChannelPayload.self) },
                resendIntervalSeconds: decision.resendIntervalSeconds))))
        case .queued: return .accepted(.init(body: .json(.init(verificationId: id, status: "queued"))))
        case .refused(let output): return output
        }
    }

    /// `channels`: 1 to 3 channels, each at most once.
    static func channels(_ given: [String]?) throws -> [SMSVerificationJob.Channel]? {
        guard let given else { return nil }
        let all = SMSVerificationJob.Channel.allCases
        let chosen = given.compactMap(SMSVerificationJob.Channel.init(rawValue:))
        guard (1...all.count).contains(given.count), chosen.count == given.count, Set(chosen).count == chosen.count else {
            throw APIFailure.invalid(field: "channels", reason: "channels must be 1 to \(all.count) distinct values of \(all.map(\.rawValue).joined(separator: ", "))")
        }
        return chosen
    }

    /// `app_verification`: a push receipt and app id, or a captcha token (the job's rule refuses both or neither).
    static func appVerification(_ proof: Components.Schemas.SMSAppVerification) throws -> SMSVerificationJob.AppVerification {
        let captcha = try proof.captcha.map { captcha in
            SMSVerificationJob.AppVerification.Captcha(
                provider: try FieldRule.requiredChoice(captcha.provider.rawValue, "app_verification.captcha.provider", SMSVerificationJob.AppVerification.Provider.self),
                token: try FieldRule.required(captcha.token, "app_verification.captcha.token", maxLength: SMSVerificationJob.AppVerification.maxTokenLength))
        }
        let appID = try FieldRule.text(proof.appId, "app_verification.app_id", maxLength: 255)
        if appID?.isEmpty == true { throw APIFailure.invalid(field: "app_verification.app_id", reason: "app_verification.app_id must not be empty") }
        return .init(receipt: try FieldRule.text(proof.receipt, "app_verification.receipt", maxLength: 128), appID: appID, captcha: captcha)
    }

    /// A value Herald decided, as the document's enum for it: one it does not list is Herald's mistake (500).
    static func generated<T: RawRepresentable>(_ raw: T.RawValue, as _: T.Type) throws -> T {
        guard let value = T(rawValue: raw) else { throw V1AnswerMismatch(type: "\(T.self)") }
        return value
    }

    func checkSMSVerification(_ input: Operations.CheckSMSVerification.Input) async throws -> Operations.CheckSMSVerification.Output {
        let context = try context
        let id = try context.parameters.require("id")
        guard case .json(let body) = input.body else { throw APIFailure.invalid(field: nil, reason: "the body must be JSON") }
        let code = try FieldRule.required(body.code, "code", maxLength: 32)
        let result = try await dependencies.verification.verifyPhone(verificationID: id, code: code, logger: context.logger)
        typealias Result = Components.Schemas.SMSCheckResult
        let checked: Result
        var retryAfter: Int?
        switch result {
        case .verified(let phone, let purpose):
            checked = .SMSCheckVerified(.init(verificationId: id, result: "verified", phoneNumber: phone,
                                               purpose: try Self.generated(purpose.rawValue, as: Components.Schemas.SMSCheckVerified.PurposePayload.self)))
        case .wrongCode(let left): checked = .SMSCheckWrongCode(.init(verificationId: id, result: "wrong_code", attemptsLeft: left))
        case .lockedOut(let seconds):
            checked = .SMSCheckLockedOut(.init(verificationId: id, result: "locked_out", retryAfterSeconds: seconds))
            retryAfter = seconds
        case .expired: checked = .SMSCheckCodeEnded(.init(verificationId: id, result: .expired))
        case .tooManyAttempts: checked = .SMSCheckCodeEnded(.init(verificationId: id, result: .tooManyAttempts))
        case .alreadyUsed: checked = .SMSCheckCodeEnded(.init(verificationId: id, result: .alreadyUsed))
        case .notFound: return .notFound(.init(body: .json(.init(verificationId: id, result: "not_found"))))
        }
        return .ok(.init(headers: .init(retryAfter: retryAfter), body: .json(checked)))
    }

    func getSMSVerification(_ input: Operations.GetSMSVerification.Input) async throws -> Operations.GetSMSVerification.Output {
        let context = try context
        guard let state = try await SMSVerificationRecord.json(try context.parameters.require("id"), client: dependencies.database, logger: context.logger) else {
            throw APIFailure.notFound("SMS verification")
        }
        return .ok(.init(body: .json(try V1Time.decoder.decode(Components.Schemas.SMSVerificationRecord.self, from: state))))
    }
}

/// A value Herald decided that docs/openapi.yaml does not list for it: Herald's own mistake (500).
struct V1AnswerMismatch: Error, CustomStringConvertible {
    let type: String
    var description: String { "a decided value is not in docs/openapi.yaml's \(type)" }
}

/// An `Idempotency-Key` header as the request's id: the same key of the same API key names the
/// same job (its message id), so a retried request is handled once.
enum IdempotencyKey {
    /// The request's id: the one its body gives (`field`), else the one its `Idempotency-Key`
    /// derives, else a new one. A malformed `Idempotency-Key` is refused even when the body gives
    /// the id; so is a given id in Herald's own namespaces (``reservedPrefixes``).
    static func id(_ given: String?, field: String, header: String?, key: APIKey, route: String) throws -> String {
        let derived = try derive(header, key: key.id, route: route)
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
