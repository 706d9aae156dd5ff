import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldPushCheck
import HeraldRuntime
import HeraldWire
import PostgresNIO

/// `heraldctl verify push RECEIPT [SECRET|-]`: the confirm API, as a front API calls it (a
/// verified secret is used up).
struct VerifyPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Confirm an app verification secret (single use). Exit 0 only when verified.",
        discussion: "Pass the secret as '-' (or leave it out) to read it from standard input, keeping it out of the shell history.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The receipt.") var receipt: String
    @Argument(help: "The secret, or '-' for standard input.") var secret: String = "-"

    func run() async throws {
        let context = try CLIContext.load(options)
        let secret = self.secret == "-" ? (readLine(strippingNewline: true) ?? "") : self.secret
        do {
            _ = try context.configuration.secrets.keyRing()
        } catch {
            throw CLIExit.fail("\(error)", code: .configuration)
        }
        let (receipt, logger) = (self.receipt, context.logger)
        let result = try await context.withDatabase { client in
            try await HeraldVerification(database: client, secrets: context.configuration.secrets)
                .confirmAppVerification(receipt: receipt, secret: secret, logger: logger)
        }
        let (name, fields) = Self.describe(result)
        printCheck(["receipt": receipt], result: name, fields: fields, json: options.output == .json)
        if case .verified = result { return }
        throw ExitCode(HeraldRuntime.ExitCode.failure.rawValue)
    }

    static func describe(_ result: PushVerifier.Result) -> (String, [String: Any]) {
        switch result {
        case .verified(let appID, let platform): ("verified", ["app_id": appID, "platform": platform.rawValue])
        case .mismatch: ("mismatch", [:])
        case .expired: ("expired", [:])
        case .alreadyUsed: ("already_used", [:])
        case .notFound: ("not_found", [:])
        }
    }
}

/// `heraldctl verify show-push RECEIPT`: how a receipt's push went and its secret's state (never the secret).
struct ShowPush: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show-push", abstract: "Show a push verification: state, secret status, provider answer, token health.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The receipt.") var receipt: String

    func run() async throws {
        let context = try CLIContext.load(options)
        let (receipt, logger) = (self.receipt, context.logger)
        let json: Data? = try await context.withDatabase { client in
            for r in try await PushVerificationRecord(receipt: receipt).rows(on: client, logger: logger) {
                var out: [String: Any] = [
                    "receipt": receipt, "state": r.state, "secret_status": r.secretStatus, "platform": r.platform, "environment": r.environment,
                    "app_id": r.appID, "sends": r.sends, "uncertain_sends": r.uncertainSends, "expires_at": r.expiresAt, "created_at": r.createdAt,
                ]
                out["provider"] = r.provider
                out["provider_message_id"] = r.providerMessageID
                out["http_status"] = r.httpStatus
                out["reason"] = r.reason
                out["device_token"] = r.tokenHint
                out["token_status"] = r.tokenStatus
                out["token_reason"] = r.tokenReason
                out["provider_calls"] = try await AttemptLog.push.read(receipt, client: client, logger: logger).map(\.record)
                return try JSONSerialization.data(withJSONObject: out)
            }
            return nil
        }
        guard let json, let found = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CLIExit.fail("no push verification \(receipt)")
        }
        printRecord(found, json: options.output == .json, lists: ["provider_calls": "call"])
    }
}

/// `heraldctl verify show-token PLATFORM TOKEN`: the health Herald keeps for a device token.
struct ShowToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show-token", abstract: "Show a device token's health: valid or invalid (why, since when), pushes, failures.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "apns or fcm.") var platform: String
    @Argument(help: "The device token, or '-' for standard input.") var token: String = "-"

    func run() async throws {
        guard let platform = PushVerificationJob.Platform(rawValue: platform) else {
            throw CLIExit.fail("platform must be apns or fcm", code: .usage)
        }
        let context = try CLIContext.load(options)
        let token = self.token == "-" ? (readLine(strippingNewline: true) ?? "") : self.token
        let logger = context.logger
        let health = try await context.withDatabase { client in
            try await PushTokens.health(platform: platform, token: token, client: client, logger: logger)
        }
        guard let health else { throw CLIExit.fail("no such device token") }
        var out: [String: Any] = [
            "platform": health.platform, "device_token": health.hint, "app_id": health.appID, "environment": health.environment,
            "status": health.status, "pushes": health.pushes, "failures": health.failures,
        ]
        out["reason"] = health.reason
        out["detail"] = health.detail
        out["invalid_since"] = health.invalidSince?.iso8601
        out["last_success_at"] = health.lastSuccessAt?.iso8601
        out["last_failure_at"] = health.lastFailureAt?.iso8601
        printRecord(out, json: options.output == .json)
    }
}
