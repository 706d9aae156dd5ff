import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldEmailCheck
import HeraldPhone
import HeraldPhoneCheck
import HeraldPush
import HeraldRuntime
import HeraldWire
import PostgresNIO

/// `heraldctl verify`: check a code by hand, or look at a verification, for support.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a code, email link or push secret by hand, or show what happened to a verification (support).",
        subcommands: [VerifySMS.self, ShowSMS.self, VerifyEmailLink.self, VerifyEmailCode.self, ShowEmail.self, VerifyPush.self, ShowPush.self, ShowToken.self, ShowApple.self]
    )
}

/// `heraldctl verify sms ID [CODE|-]`: the check API, as a front API calls it (it counts as an attempt).
struct VerifySMS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sms",
        abstract: "Check an SMS code (counts as an attempt). Exit 0 only when verified.",
        discussion: "Pass the code as '-' (or leave it out) to read it from standard input, keeping it out of the shell history.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The verification id.") var verificationID: String
    @Argument(help: "The code, or '-' for standard input.") var code: String = "-"

    func run() async throws {
        let context = try CLIContext.load(options)
        let code = self.code == "-" ? (readLine(strippingNewline: true) ?? "") : self.code
        do {
            _ = try context.configuration.secrets.keyRing()
        } catch {
            throw CLIExit.fail("\(error)", code: .configuration)
        }
        let (id, logger) = (verificationID, context.logger)
        let result = try await context.withDatabase { client in
            try await HeraldVerification(database: client, secrets: context.configuration.secrets)
                .verifyPhone(verificationID: id, code: code, logger: logger)
        }
        let (name, fields) = Self.describe(result)
        printCheck(["verification_id": verificationID], result: name, fields: fields, json: options.output == .json)
        if case .verified = result { return }
        throw ExitCode(HeraldRuntime.ExitCode.failure.rawValue)
    }

    static func describe(_ result: PhoneVerifier.Result) -> (String, [String: Any]) {
        switch result {
        case .verified(let phone, let purpose): ("verified", ["phone": Redact.phone(phone), "purpose": purpose.rawValue])
        case .wrongCode(let left): ("wrong_code", ["attempts_left": left])
        case .expired: ("expired", [:])
        case .tooManyAttempts: ("too_many_attempts", [:])
        case .alreadyUsed: ("already_used", [:])
        case .lockedOut(let seconds): ("locked_out", ["retry_after_seconds": seconds])
        case .notFound: ("not_found", [:])
        }
    }
}

/// `heraldctl verify show-sms ID`: state, provider and attempts of one verification; no code.
struct ShowSMS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show-sms", abstract: "Show an SMS verification: state, code status, provider calls.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The verification id.") var verificationID: String

    func run() async throws {
        let context = try CLIContext.load(options)
        let (id, logger) = (verificationID, context.logger)
        // As JSON bytes: what crosses the database closure must be Sendable.
        let json = try await context.withDatabase { client in try await SMSVerificationRecord.json(id, client: client, logger: logger) }
        guard let json, let found = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CLIExit.fail("no SMS verification \(verificationID)")
        }
        printRecord(found, json: options.output == .json, lists: ["provider_calls": "call"])
    }
}

/// `heraldctl verify email-link EMAIL [OOBCODE|-] [--mode MODE]`: the consume API, as a
/// front API calls it (a success uses the code up).
struct VerifyEmailLink: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "email-link",
        abstract: "Consume an email link's oobCode for an address (uses it up). Exit 0 only on success.",
        discussion: "Pass the code as '-' (or leave it out) to read it from standard input, keeping it out of the shell history. A whole link is accepted too: its oobCode is taken.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The email address the link was sent to.") var email: String
    @Argument(help: "The oobCode (or the link), or '-' for standard input.") var code: String = "-"
    @Option(help: "sign_in, verify_email, reset_password, verify_and_change_email or recover_email.") var mode: String = "sign_in"

    func run() async throws {
        let context = try CLIContext.load(options)
        guard let mode = EmailActionJob.Mode(rawValue: mode) else {
            throw CLIExit.fail("--mode must be one of \(EmailActionJob.Mode.allCases.map(\.rawValue).joined(separator: ", "))", code: .usage)
        }
        var code = self.code == "-" ? (readLine(strippingNewline: true) ?? "") : self.code
        if code.contains("oobCode="), let value = URLComponents(string: code)?.queryItems?.first(where: { $0.name == "oobCode" })?.value {
            code = value
        }
        do {
            _ = try context.configuration.secrets.keyRing()
        } catch {
            throw CLIExit.fail("\(error)", code: .configuration)
        }
        let (email, oobCode, logger) = (self.email, code, context.logger)
        let result = try await context.withDatabase { client in
            try await HeraldVerification(database: client, secrets: context.configuration.secrets)
                .consumeEmailAction(mode, email: email, oobCode: oobCode, logger: logger)
        }
        let (name, fields) = Self.describe(result)
        printCheck(["email": Redact.email(email)], result: name, fields: fields, json: options.output == .json)
        switch result {
        case .success, .recovered: return
        default: throw ExitCode(HeraldRuntime.ExitCode.failure.rawValue)
        }
    }

    static func describe(_ result: EmailLinkVerifier.Result) -> (String, [String: Any]) {
        switch result {
        case .success(let email, let mode, let url, let settings):
            ("success", ["email": Redact.email(email), "mode": mode.rawValue, "continue_url": url, "link_domain": settings.linkDomain])
        case .recovered(let email, let changedTo, let url, let settings):
            ("recovered", ["email": Redact.email(email), "changed_to": Redact.email(changedTo), "mode": "recover_email",
                           "continue_url": url, "link_domain": settings.linkDomain])
        case .emailMismatch: ("email_mismatch", [:])
        case .expired: ("expired", [:])
        case .alreadyUsed: ("already_used", [:])
        case .superseded: ("superseded", [:])
        case .notFound: ("not_found", [:])
        }
    }
}

/// `heraldctl verify email-code EMAIL [CODE|-] [--purpose PURPOSE]`: the check API of one-time
/// email codes, as a front API calls it (it counts as an attempt).
struct VerifyEmailCode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "email-code",
        abstract: "Check a one-time email code for an address (counts as an attempt). Exit 0 only when verified.",
        discussion: "Pass the code as '-' (or leave it out) to read it from standard input, keeping it out of the shell history.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The email address the code was sent to.") var email: String
    @Argument(help: "The code, or '-' for standard input.") var code: String = "-"
    @Option(help: "sign_in, mfa_enroll, mfa_sign_in or verify_email.") var purpose: String = "sign_in"

    func run() async throws {
        let context = try CLIContext.load(options)
        guard let purpose = EmailCodeJob.Purpose(rawValue: purpose) else {
            throw CLIExit.fail("--purpose must be one of \(EmailCodeJob.Purpose.allCases.map(\.rawValue).joined(separator: ", "))", code: .usage)
        }
        let code = self.code == "-" ? (readLine(strippingNewline: true) ?? "") : self.code
        do {
            _ = try context.configuration.secrets.keyRing()
        } catch {
            throw CLIExit.fail("\(error)", code: .configuration)
        }
        let (email, logger) = (self.email, context.logger)
        let result = try await context.withDatabase { client in
            try await HeraldVerification(database: client, secrets: context.configuration.secrets)
                .verifyEmailCode(email: email, purpose: purpose, code: code, logger: logger)
        }
        let (name, fields) = Self.describe(result)
        printCheck(["email": Redact.email(email)], result: name, fields: fields, json: options.output == .json)
        if case .verified = result { return }
        throw ExitCode(HeraldRuntime.ExitCode.failure.rawValue)
    }

    static func describe(_ result: EmailCodeVerifier.Result) -> (String, [String: Any]) {
        let name = EmailCodeVerifier.name(of: result)
        switch result {
        case .verified(let email, let purpose): return (name, ["email": Redact.email(email), "purpose": purpose.rawValue])
        case .wrongCode(let left): return (name, ["attempts_left": left])
        case .lockedOut(let seconds): return (name, ["retry_after_seconds": seconds])
        case .expired, .tooManyAttempts, .alreadyUsed, .notFound: return (name, [:])
        }
    }
}

/// `heraldctl verify show-email ID`: state, provider and codes of one email request (an
/// `email.action` request id), or of one one-time code verification (an `email.code`
/// verification id); never a code.
struct ShowEmail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show-email",
        abstract: "Show an email request or code verification: state, provider, its codes' status, provider calls.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The request id (email.action) or verification id (email.code).") var requestID: String

    func run() async throws {
        let context = try CLIContext.load(options)
        let (id, logger) = (requestID, context.logger)
        let code: Data? = try await context.withDatabase { client in
            try await EmailCodeStore.record(id, client: client, logger: logger).map { try JSONSerialization.data(withJSONObject: $0) }
        }
        if let code, let found = try JSONSerialization.jsonObject(with: code) as? [String: Any] {
            printRecord(found, json: options.output == .json, lists: ["codes": "code", "provider_calls": "call"])
            return
        }
        let json: Data? = try await context.withDatabase { client in
            for row in try await EmailRequestRecord(requestID: id).rows(on: client, logger: logger) {
                var out: [String: Any] = [
                    "request_id": id, "state": row.state, "email": Redact.email(row.email), "mode": row.mode,
                    "uncertain_sends": row.uncertainSends, "created_at": row.createdAt, "updated_at": row.updatedAt,
                ]
                out["reason"] = row.reason
                out["provider"] = row.provider
                out["provider_message_id"] = row.providerMessageID
                // A change's old address, or the address a recovery replaces (masked); the
                // recover_email request a change enqueues when its link is used.
                out["paired_email"] = row.pairedEmail.map(Redact.email)
                out["recovery_request_id"] = row.recoveryRequestID
                out["codes"] = try await EmailCodesOfRequest(requestID: id).rows(on: client, logger: logger).map { c -> [String: Any] in
                    var code: [String: Any] = ["status": c.status, "key_id": c.keyID, "expires_at": c.expiresAt]
                    code["continue_url"] = c.continueURL
                    code["used_at"] = c.usedAt
                    return code
                }
                out["provider_calls"] = try await AttemptLog.email.read(id, client: client, logger: logger).map(\.record)
                return try JSONSerialization.data(withJSONObject: out)
            }
            return nil
        }
        guard let json, let found = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CLIExit.fail("no email request or code verification \(requestID)")
        }
        printRecord(found, json: options.output == .json, lists: ["codes": "code", "provider_calls": "call"])
    }
}
