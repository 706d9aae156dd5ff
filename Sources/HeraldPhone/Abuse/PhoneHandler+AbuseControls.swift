import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

extension PhoneHandler {
    /// App verification, then the fraud guard (docs/abuse.md): the refusal of a request that
    /// fails either, nil to go on; a request whose evidence was accepted passes a pause. Never
    /// asked for a test number; the region the fraud guard counts in is libphonenumber's
    /// (`info.regionCode`).
    func abuseRefusal(_ job: SMSVerificationJob, info: PhoneNumberInfo, context: JobContext, logger: Logger) async throws -> JobOutcome? {
        let phone = info.number
        var proven = false
        switch try await appVerifier.judge(job, phone: phone.e164, client: context.database, logger: logger) {
        case .passed: break
        case .proven: proven = true
        case .refused(let reason):
            return refused(job, phone: phone, info: info, reason: reason, logger: logger, write: PhoneStore.refusedRow(job, phone: phone.e164, messageID: context.envelope.messageID, reason: reason))
        case .unavailable(let why):
            // The captcha provider's trouble, not the token's: the job is retried.
            metrics.decision("retrying")
            logger.warning("captcha siteverify unavailable", metadata: ["why": "\(why)"])
            throw JobFailure.transient(why)
        }
        guard let pause = try await fraudGuard.check(verificationID: job.verificationID, phone: phone.e164, region: info.regionCode,
                                                    knownHashes: KnownNumbers.hashes(phone.e164, hasher: hasher), proven: proven,
                                                    client: context.database, logger: logger) else { return nil }
        if pause.new { noticePause(pause, logger: logger) }
        // A pause an operator lifts (no end) is answered with a retry an hour later.
        let retryAfter = pause.until.map { max(Int($0.timeIntervalSinceNow.rounded(.up)), 1) } ?? 3600
        return refused(job, phone: phone, info: info, reason: pause.reason, metricReason: "fraud_guard:\(pause.scope)", logger: logger,
                       write: PhoneStore.refusedRow(job, phone: phone.e164, messageID: context.envelope.messageID, reason: pause.reason))
            .answering(.refused(pause.reason, retryAfterSeconds: retryAfter))
    }

    /// A pause this request tripped: counted and logged once.
    func noticePause(_ pause: FraudGuard.Pause, logger: Logger) {
        metrics.fraudGuardPause(scope: pause.scope)
        logger.warning("fraud guard paused a scope", metadata: [
            "scope": "\(pause.scope)", "key": "\(pause.key)", "sent": "\(pause.sent)", "verified": "\(pause.verified)"])
    }
}
