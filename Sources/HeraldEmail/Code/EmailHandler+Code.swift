import Foundation
import HeraldEmailCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

extension EmailHandler {
    /// An `email.code` job: decided in PostgreSQL (`herald.email_otp_prepare`: re-entrancy within
    /// the resend interval, the address's guessing lock, the `email.limits.*` send limits), then a
    /// fresh numeric code (CSPRNG, stored only as its keyed hash bound to address and purpose) is
    /// mailed with the localised `code` templates through the providers in order. As for links,
    /// the verification is recorded `sending` before the provider call and `sent` right after, so
    /// a redelivery mails nothing again.
    func handle(_ job: EmailCodeJob, context: JobContext) async throws -> JobOutcome {
        let email = EmailAddress.normalize(job.email)
        var logger = context.logger
        logger[metadataKey: "verification_id"] = "\(job.verificationID)"
        logger[metadataKey: "email"] = "\(Redact.email(email))"
        logger[metadataKey: "purpose"] = "\(job.purpose.rawValue)"

        if PrivateRelayAddresses.isRelay(email), try await relay.isUndeliverable(email, client: context.database, logger: logger) {
            // Answered as a send: whether an address forwards tells whoever asks about its owner.
            return codeRefused(job, email: email, reason: Self.relayDisabledReason, logger: logger).answering(.sending(channel: "email"))
        }
        let code = SecretGenerator.numericCode(length: job.codeLength ?? configuration.code.length)
        let ttlSeconds = job.codeTTLSeconds ?? configuration.code.ttlSeconds
        let request = EmailCodeStore.Request(
            verificationID: job.verificationID, messageID: context.envelope.messageID, email: email, purpose: job.purpose.rawValue,
            force: job.forceResend ?? false,
            hash: hasher.hash(code, context: EmailCodeVerifier.hashContext(email: email, purpose: job.purpose.rawValue, tenant: job.tenant ?? "")),
            ttlSeconds: ttlSeconds, maxAttempts: configuration.code.maxAttempts, resendIntervalSeconds: configuration.code.resendIntervalSeconds,
            limits: configuration.limits.rateLimits(email: email, ip: job.client?.ip), ownerKey: context.ownerKey,
            guessing: configuration.code.guessing, tenant: job.tenant ?? "")

        switch try await EmailCodeStore.prepare(request, client: context.database, logger: logger) {
        case .send(let uncertain):
            if uncertain { logger.warning("an earlier try of this verification may have reached a provider; mailing a fresh code") }
            context.decided(.sending(channel: "email"))
            return try await sendCode(job, email: email, code: code, ttlSeconds: ttlSeconds, context: context, logger: logger)
        case .reused:
            metrics.decision("code_reused")
            logger.info("a code mailed moments ago answers this verification too; no email sent")
            return .completed().answering(JobDecision(status: .reused, resendIntervalSeconds: configuration.code.resendIntervalSeconds))
        case .refused(let reason):
            // Recorded `refused` by herald.email_otp_prepare.
            metrics.refusal(reason)
            return codeRefused(job, email: email, reason: reason, logger: logger)
                .answering(.refused(reason, retryAfterSeconds: request.limits.retryAfterSeconds(refusedBy: reason)))
        case .done(let state):
            metrics.decision("code_duplicate")
            logger.info("verification already decided", metadata: ["state": "\(state.rawValue)"])
            switch state {
            // Its event may not have been committed (a crash after the record): events are at least once.
            case .sent: return .completed(events: [codeEvent("email.code_sent", job, email: email)])
            case .refused, .failed: return .rejected("already \(state.rawValue)")
            case .sending, .retrying, .reused: return .completed()
            }
        case .closed:
            metrics.decision("code_closed")
            return .rejected("code_closed")
        case .busy:
            metrics.decision("code_busy")
            throw JobFailure.transient("verification_in_progress")
        case .invalid(let reason):
            // Never mailed to an address (or for a purpose) the verification was not made for.
            metrics.decision("code_refused")
            throw JobFailure.invalid(reason)
        }
    }

    private func sendCode(_ job: EmailCodeJob, email: String, code: Secret, ttlSeconds: Int, context: JobContext, logger: Logger) async throws -> JobOutcome {
        let (rendered, masked) = templates.renderCode(locale: job.locale, email: email, code: code, expiresSeconds: ttlSeconds)
        var message = EmailMessage(from: configuration.sender(to: email), replyTo: configuration.replyTo.isEmpty ? nil : configuration.replyTo,
                                   to: email, subject: rendered.subject, text: rendered.text, html: rendered.html,
                                   requestID: job.verificationID, jobMessageID: context.envelope.messageID, kind: EmailTemplates.code)
        message.maskedText = masked
        message.jobType = EmailCodeJob.typeName
        let delivery = await providers.send(message, context: DeliveryContext(logger: logger, database: context.database))
        let (id, messageID, attempts, database, metrics) = (job.verificationID, context.envelope.messageID, delivery.attempts, context.database, metrics)
        return try await delivery.settle(in: context, accepted: {
            metrics.decision("code_sent")
            let sent = codeEvent("email.code_sent", job, email: email, provider: delivery.provider)
            return .finished(.completed(events: [sent])) {
                try await EmailCodeStore.settle(.init(verificationID: id, messageID: messageID, state: .sent, attempts: attempts),
                                                client: database, logger: logger)
            }
        }, refused: { refusal in
            let failure = codeFailed(job, reason: "provider_rejected:\(refusal)", attempts: attempts, context: context)
            return .finished(.rejected(failure.reason ?? "")) {
                try await database.withTransaction(logger: logger) { try await failure.write?($0, logger) }
            }
        }, failed: { reason in
            metrics.decision("code_retrying")
            return .retry(reason) {
                try await EmailCodeStore.settle(.init(verificationID: id, messageID: messageID, state: .retrying, reason: reason, attempts: attempts),
                                                client: database, logger: logger)
            }
        })
    }

    /// Dead-lettered after `runner.max_attempts`: the verification ends `failed` with the reason,
    /// its code dies, and `email.code_failed` is emitted, committed with the ledger's `dead` record.
    func exhausted(_ job: EmailCodeJob, reason: String, context: JobContext) -> JobOutcome {
        codeFailed(job, reason: reason, attempts: [], context: context)
    }

    /// The one way a code verification fails for good (a provider's final refusal, or
    /// exhaustion), only while this job is the verification's latest: `email.code_failed` with it.
    func codeFailed(_ job: EmailCodeJob, reason: String, attempts: [DeliveryAttempt], context: JobContext) -> JobOutcome {
        metrics.decision("code_failed")
        let email = EmailAddress.normalize(job.email)
        let settlement = EmailCodeStore.Settlement(verificationID: job.verificationID, messageID: context.envelope.messageID,
                                                   state: .failed, reason: reason, attempts: attempts)
        let (event, exchange) = (codeEvent("email.code_failed", job, email: email, reason: reason), eventsExchange)
        return .rejected(reason) { connection, logger in
            if try await EmailCodeStore.settle(settlement, on: connection, logger: logger) {
                try await EventOutbox.insert([event], exchange: exchange, on: connection, logger: logger)
            }
        }
    }

    /// Nothing mailed: the address is locked for guessing, over a send limit, or an Apple relay
    /// address Apple does not forward to. `email.code_refused` tells the front API.
    func codeRefused(_ job: EmailCodeJob, email: String, reason: String, logger: Logger) -> JobOutcome {
        metrics.decision("code_refused")
        logger.notice("email code refused", metadata: ["reason": "\(reason)"])
        return .rejected(reason, events: [codeEvent("email.code_refused", job, email: email, reason: reason)])
    }

    func codeEvent(_ name: String, _ job: EmailCodeJob, email: String, provider: String? = nil, reason: String? = nil) -> OutgoingEvent {
        OutgoingEvent(name: name, payload: EmailCodeEvent(verificationID: job.verificationID, email: Redact.email(email),
                                                          purpose: job.purpose.rawValue, provider: provider, reason: reason))
    }
}

/// Payload of `email.code_sent`, `email.code_failed` and `email.code_refused` (the address masked).
struct EmailCodeEvent: Encodable {
    var verificationID: String
    var email: String
    var purpose: String
    var provider: String?
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case email, purpose, provider, reason
        case verificationID = "verification_id"
    }
}
