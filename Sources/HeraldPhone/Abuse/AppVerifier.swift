import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// App verification before an SMS (``AppVerificationConfiguration``): a push receipt spent
/// through `herald.push_receipt_consume` (migration 17, the SQL contract with herald-push), or
/// a captcha token checked at its siteverify. Evidence accepted for a verification is recorded
/// (`herald.sms_app_verifications`), so a redelivery of its job does not spend it twice; runs
/// of herald-cleanup purge old records (`cleanup.purge.sms_app_verifications_days`).
struct AppVerifier: Sendable {
    enum Verdict: Sendable, Equatable {
        /// No evidence needed (`off`, or `optional` without any).
        case passed
        /// Evidence accepted: the request proved more than a number (it passes a fraud-guard pause).
        case proven
        /// `app_not_verified` or `app_not_verified:<why>`.
        case refused(String)
        /// The captcha provider did not answer: retry the job.
        case unavailable(String)
    }

    let configuration: AppVerificationConfiguration
    let captcha: CaptchaVerifier

    init(configuration: AppVerificationConfiguration) {
        self.configuration = configuration
        self.captcha = CaptchaVerifier(configuration: configuration)
    }

    func judge(_ job: SMSVerificationJob, phone: String, client: PostgresClient, logger: Logger) async throws -> Verdict {
        guard configuration.mode != .off else { return .passed }
        guard let evidence = job.appVerification else {
            return configuration.mode == .required ? .refused("app_not_verified") : .passed
        }
        if try await accepted(job.verificationID, phone: phone, client: client, logger: logger) { return .proven }
        if let receipt = evidence.receipt, let appID = evidence.appID {
            let consume = AppReceiptConsume(receipt: receipt, appID: appID, maxAgeSeconds: configuration.receiptMaxAgeSeconds, verificationID: job.verificationID)
            let outcome = try await consume.first(on: client, logger: logger)?.outcome ?? "unknown"
            guard outcome == "ok" else { return .refused("app_not_verified:receipt_\(outcome)") }
            try await record(job.verificationID, phone: phone, method: "receipt", detail: appID, score: nil, hostname: nil, client: client, logger: logger)
            return .proven
        }
        guard let token = evidence.captcha else { return .refused("app_not_verified") }
        switch await captcha.verify(token, remoteIP: job.client?.ip, logger: logger) {
        case .passed(let score, let hostname):
            try await record(job.verificationID, phone: phone, method: "captcha", detail: token.provider.rawValue, score: score, hostname: hostname,
                             client: client, logger: logger)
            return .proven
        case .refused(let why): return .refused("app_not_verified:\(why)")
        case .unavailable(let why): return .unavailable(why)
        }
    }

    /// Evidence was accepted for this verification (its first job's, for a later send of it).
    func accepted(_ verificationID: String, phone: String, client: PostgresClient, logger: Logger) async throws -> Bool {
        try await AppVerificationAccepted(verificationID: verificationID, phoneNumber: phone).first(on: client, logger: logger) != nil
    }

    private func record(_ verificationID: String, phone: String, method: String, detail: String, score: Double?, hostname: String?,
                        client: PostgresClient, logger: Logger) async throws {
        try await AppVerificationRecord(verificationID: verificationID, phoneNumber: phone, method: method, detail: detail, score: score,
                                        hostname: hostname).rows(on: client, logger: logger)
    }
}
