import Foundation
import HTTPTypes
import HeraldAPIStore
import HeraldClient
import HeraldEmailCheck
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Hummingbird

/// `/v2/Services/{ServiceSid}/Verifications[/{Sid}]` and `/VerificationCheck`: Twilio Verify's
/// verifications, each send an `sms.verification` job of herald-sms, each check Herald's own.
struct VerificationRoutes {
    let dependencies: APIDependencies

    func add(to group: RouterGroup<APIContext>) {
        group.post("Services/{service}/Verifications", use: create)
        group.get("Services/{service}/Verifications/{sid}", use: fetch)
        group.post("Services/{service}/Verifications/{sid}", use: update)
        group.post("Services/{service}/VerificationCheck", use: check)
    }

    /// Parameters Twilio's clients send that change nothing Herald does.
    static let createParameters: Set<String> = ["To", "Channel", "Locale", "CustomFriendlyName", "AppHash", "DeviceIp", "RiskCheck", "Tags"]
    static let otherChannels: Set<String> = ["call", "email", "whatsapp", "sna", "auto", "rcs"]
    /// Twilio's channel → herald-sms's (`sms` is the job's default: none named).
    static let channels: [String: SMSVerificationJob.Channel?] = ["sms": nil, "whatsapp": .whatsapp, "call": .voice]

    /// A code check's answer, the phone's (PhoneVerifier) or the email's (EmailCodeVerifier) alike.
    enum CodeCheck {
        case verified, wrongCode(attemptsLeft: Int), expired, tooManyAttempts, alreadyUsed, notFound, lockedOut(retryAfterSeconds: Int)

        init(_ phone: PhoneVerifier.Result) {
            switch phone {
            case .verified: self = .verified
            case .wrongCode(let left): self = .wrongCode(attemptsLeft: left)
            case .expired: self = .expired
            case .tooManyAttempts: self = .tooManyAttempts
            case .alreadyUsed: self = .alreadyUsed
            case .notFound: self = .notFound
            case .lockedOut(let seconds): self = .lockedOut(retryAfterSeconds: seconds)
            }
        }

        init(_ email: EmailCodeVerifier.Result) {
            switch email {
            case .verified: self = .verified
            case .wrongCode(let left): self = .wrongCode(attemptsLeft: left)
            case .expired: self = .expired
            case .tooManyAttempts: self = .tooManyAttempts
            case .alreadyUsed: self = .alreadyUsed
            case .notFound: self = .notFound
            case .lockedOut(let seconds): self = .lockedOut(retryAfterSeconds: seconds)
            }
        }
    }

    func create(_ request: Request, context: APIContext) async throws -> Response {
        let service = try await service(request, context)
        let form = try await FormFields.body(request, limit: dependencies.api.maxBodyBytes, accepted: Self.createParameters)
        let channel = try form.required("Channel", maxLength: 16)
        // WhatsApp and calls when this herald-api's configuration has them (sms.whatsapp, sms.voice), as herald-sms's should;
        // email codes always (herald-email).
        var served: Set<String> = ["sms", "email"]
        if dependencies.sms.whatsapp.enabled { served.insert("whatsapp") }
        if dependencies.sms.voice.enabled { served.insert("call") }
        guard served.contains(channel) else {
            throw Self.otherChannels.contains(channel) ? TwilioError.channelNotSupported(channel) : TwilioError.invalid("Channel")
        }
        let byEmail = channel == "email"
        let given = try form.required("To", maxLength: byEmail ? 254 : 32)
        let to = byEmail ? try Self.address(given) : try number(given, service: service)
        let locale = try form.string("Locale", maxLength: 35)
        if let locale { do { try WireRules.locale(locale, field: "Locale") } catch { throw TwilioError.invalid("Locale") } }
        let ip = try context.endUserIP(named: form.string("DeviceIp", maxLength: 45), field: "DeviceIp", twilio: true)
        let (starts, correlation, logger) = (dependencies.starts, request.headers[.correlationID], context.logger)
        let attemptSid = "VL" + RandomID.hex()
        let (outcome, waiter) = try await starts.recording(messageID: attemptSid) {
            try await dependencies.verify.start(service: service, to: to, channel: channel, locale: locale, attemptSid: attemptSid,
                                                logger: logger) { connection, attempt, resend in
                // A resend sends a fresh code at once (force_resend): Twilio's clients resend on the user's request.
                // The code is the service's (tenant): another service's code for the same To never answers it.
                if byEmail {
                    let job = EmailCodeJob(verificationID: attempt.sid, email: to, purpose: .signIn, locale: locale, forceResend: resend,
                                           client: .init(ip: ip?.description), codeLength: service.codeLength, codeTTLSeconds: service.ttlSeconds,
                                           tenant: service.sid)
                    try await starts.record(job, messageID: attempt.sid, correlationID: correlation, on: connection, logger: logger)
                    return
                }
                let job = SMSVerificationJob(verificationID: attempt.sid, phoneNumber: to, locale: locale, purpose: .signIn, forceResend: resend,
                                             client: .init(ip: ip?.description), codeLength: service.codeLength, codeTTLSeconds: service.ttlSeconds,
                                             channel: Self.channels[channel] ?? nil, tenant: service.sid)
                try await starts.record(job, messageID: attempt.sid, correlationID: correlation, on: connection, logger: logger)
            }
        }
        switch outcome {
        case .started(let verification, let resend):
            if case .decided(let decision) = await starts.decision(waiter), let refusal = Self.refusal(decision) {
                // A refused resend is taken back (the code before it stays live); a verification
                // whose first send was refused is failed, whatever its channel.
                if resend {
                    try await dependencies.verify.withdraw(attemptSid: attemptSid, service: service, logger: logger)
                } else {
                    _ = try await dependencies.verify.finish(service: service.sid, sid: verification.sid, as: .failed, logger: logger)
                }
                throw refusal
            }
            return JSONResponse.make(.created, try dependencies.resources(request, context).verification(verification))
        case .maxSendAttempts:
            waiter.cancel()
            throw TwilioError.maxSendAttempts
        }
    }

    /// Twilio's error for a worker's refusal (nil for a decision to send): 60203 for the resend
    /// limit and the code's budget of paid sends, 20429 for another limit, 60410 for the fraud guard's pause, 60205 for a landline,
    /// 60200 for the rest (a region, an app not verified, a number the worker cannot read).
    static func refusal(_ decision: JobDecision) -> TwilioError? {
        let reason = decision.reason ?? decision.status.rawValue
        switch decision.refusal {
        case .limit where reason == "rate_limited:resend" || reason == "rate_limited:paid_sends":
            return .maxSendAttempts
        case .limit:
            return TwilioError(code: 20429, status: .tooManyRequests, message: "Too Many Requests (\(reason))", retryAfter: decision.retryAfterSeconds ?? 60)
        case .pause:
            var blocked = TwilioError.blocked(reason)
            blocked.retryAfter = decision.retryAfterSeconds
            return blocked
        case .policy where reason.hasPrefix("number_type_not_allowed:fixed_line"):
            return .landline
        case .policy:
            return .invalid("To", reason)
        case nil:
            return decision.status == .invalid ? .invalid("To", reason) : nil
        }
    }

    func fetch(_ request: Request, context: APIContext) async throws -> Response {
        let service = try await service(request, context)
        let sid = try context.parameters.require("sid")
        guard let read = try await dependencies.verify.verification(service: service.sid, sid: sid, logger: context.logger) else {
            throw TwilioError.notFound(request.uri.path)
        }
        let verification = try await failedIfUndelivered(read, service: service.sid, context)
        guard verification.status == .pending || verification.status == .canceled || verification.status == .failed
        else {
            // Twilio: an approved, expired or exhausted verification is deleted (20404).
            throw TwilioError.notFound(request.uri.path)
        }
        return JSONResponse.make(.ok, try dependencies.resources(request, context).verification(verification))
    }

    func update(_ request: Request, context: APIContext) async throws -> Response {
        let service = try await service(request, context)
        let sid = try context.parameters.require("sid")
        let form = try await FormFields.body(request, limit: dependencies.api.maxBodyBytes, accepted: ["Status"])
        let status: VerifyVerification.Status
        switch try form.required("Status", maxLength: 16) {
        case "canceled": status = .canceled
        case "approved": status = .approved
        default: throw TwilioError.invalid("Status", "canceled or approved")
        }
        guard let verification = try await dependencies.verify.finish(service: service.sid, sid: sid, as: status, logger: context.logger) else {
            throw TwilioError.notFound(request.uri.path)
        }
        // The code dies with the verification: a canceled one cannot be approved by its code later.
        if verification.byEmail {
            for attempt in verification.sendAttempts { try await dependencies.verification.voidEmailCode(verificationID: attempt.sid, logger: context.logger) }
        } else if let attempt = try await codeAttempt(verification, context) {
            try await dependencies.verification.voidPhoneCode(verificationID: attempt.sid, logger: context.logger)
        }
        return JSONResponse.make(.ok, try dependencies.resources(request, context).verification(verification))
    }

    func check(_ request: Request, context: APIContext) async throws -> Response {
        let service = try await service(request, context)
        let form = try await FormFields.body(request, limit: dependencies.api.maxBodyBytes, accepted: ["Code", "To", "VerificationSid"])
        let code = try form.required("Code", maxLength: 16)
        let target: VerifyStore.Target
        if let sid = try form.string("VerificationSid", maxLength: 34), !sid.isEmpty {
            target = .sid(sid)
        } else if let to = try form.string("To", maxLength: 254), !to.isEmpty {
            // To as create keeps it: an address normalised (``address(_:)``), a number in E.164
            // (`+1 (415) 555-0101` names the verification `+14155550101` does).
            target = .to(to.contains("@") ? EmailAddress.normalize(to) : Self.spelledE164(to))
        } else {
            throw TwilioError(code: 60200, status: .badRequest, message: "Invalid parameter: either To or VerificationSid must be given")
        }
        let store = dependencies.verify
        switch try await store.claimCheck(service: service, target: target, logger: context.logger) {
        case .notFound: throw TwilioError.notFound(request.uri.path)
        case .exhausted: throw TwilioError.maxCheckAttempts()
        case .claimed(let verification):
            // No SMS of it was sent: failed, and not pending any more (20404, as Twilio answers).
            let result: CodeCheck
            if verification.byEmail {
                // One pending code per address, purpose and service: the last send's.
                result = CodeCheck(try await dependencies.verification.verifyEmailCode(email: verification.to, purpose: .signIn, tenant: service.sid,
                                                                                         code: code, logger: context.logger))
            } else {
                guard try await failedIfUndelivered(verification, service: service.sid, context).status == .pending,
                      let attempt = try await codeAttempt(verification, context) else { throw TwilioError.notFound(request.uri.path) }
                result = CodeCheck(try await dependencies.verification.verifyPhone(verificationID: attempt.sid, code: code, logger: context.logger))
            }
            let settle = { (status: VerifyVerification.Status) in
                try await store.settleCheck(service: service.sid, sid: verification.sid, status: status, logger: context.logger) ?? verification
            }
            let render = try dependencies.resources(request, context)
            switch result {
            case .verified:
                return JSONResponse.make(.ok, render.check(try await settle(.approved), status: .approved))
            case .wrongCode(let left):
                let spent = verification.checks >= service.maxCheckAttempts || left == 0
                let status: VerifyVerification.Status = spent ? .maxAttemptsReached : .pending
                return JSONResponse.make(.ok, render.check(spent ? try await settle(status) : verification, status: status))
            case .tooManyAttempts:
                _ = try await settle(.maxAttemptsReached)
                throw TwilioError.maxCheckAttempts()
            case .lockedOut(let seconds):
                throw TwilioError.maxCheckAttempts(retryAfter: seconds)
            case .expired:
                _ = try await settle(.expired)
                throw TwilioError.notFound(request.uri.path)
            case .alreadyUsed, .notFound:
                // Used through /v1, or its SMS was refused or is not sent yet.
                throw TwilioError.notFound(request.uri.path)
            }
        }
    }

    /// `To` of the email channel: an address herald-email would send to (normalised), else 60200.
    static func address(_ text: String) throws -> String {
        do { try WireRules.email(text, field: "To") } catch { throw TwilioError.invalid("To") }
        return EmailAddress.normalize(text)
    }

    /// A pending verification none of whose sends herald-sms sent (each provider failed, or it
    /// refused them) becomes `failed`, recorded, as Twilio shows a verification it could not deliver.
    private func failedIfUndelivered(_ verification: VerifyVerification, service: String, _ context: APIContext) async throws -> VerifyVerification {
        guard verification.status == .pending, !verification.sendAttempts.isEmpty else { return verification }
        let undelivered = try await dependencies.verification.phoneSendsUndelivered(verification.sendAttempts.map(\.sid), logger: context.logger)
        guard verification.sendAttempts.allSatisfy({ undelivered.contains($0.sid) }) else { return verification }
        return try await dependencies.verify.finish(service: service, sid: verification.sid, as: .failed, logger: context.logger) ?? verification
    }

    /// The send whose code is judged: the last one herald-sms did not refuse (a resend refused
    /// by `sms.limits.resend` leaves the code before it live), else the last one (not handled yet).
    private func codeAttempt(_ verification: VerifyVerification, _ context: APIContext) async throws -> VerifyVerification.SendAttempt? {
        let carriers = try await dependencies.verification.phoneCodeCarriers(verification.sendAttempts.map(\.sid), logger: context.logger)
        return verification.sendAttempts.last { carriers.contains($0.sid) } ?? verification.currentAttempt
    }

    /// `To` as E.164 that herald-sms would send to: a syntax or number libphonenumber does not
    /// know answers 60200, a landline 60205, a number the region or type policy refuses 60410.
    /// A number as create and check both read `To`: E.164 once the spaces, dashes, dots and
    /// brackets people write are taken out (`+1 (415) 555-0101` is `+14155550101`).
    static func spelledE164(_ text: String) -> String {
        String(text.filter { !" -.()".contains($0) })
    }

    private func number(_ text: String, service: VerifyService) throws -> String {
        let phone: PhoneNumber
        do { phone = try PhoneNumber(Self.spelledE164(text)) } catch { throw TwilioError.invalid("To") }
        if dependencies.sms.testNumbers[phone.e164] != nil { return phone.e164 }
        let info: PhoneNumberInfo
        do { info = try PhoneNumberClassifier.classify(phone) } catch { throw TwilioError.invalid("To") }
        // The service's own setting. herald-sms's region and number-type policy is judged by
        // herald-sms, and its refusal answered at create time (``refusal(_:)``).
        if info.type == .fixedLine, service.skipSMSToLandlines { throw TwilioError.landline }
        return phone.e164
    }

    private func service(_ request: Request, _ context: APIContext) async throws -> VerifyService {
        let sid = try context.parameters.require("service")
        guard let service = try await dependencies.verify.service(sid, logger: context.logger) else { throw TwilioError.notFound(request.uri.path) }
        return service
    }
}
