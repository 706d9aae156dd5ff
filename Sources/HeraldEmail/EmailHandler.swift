import Foundation
import HeraldEmailCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// `herald-email`: for each `email.action` job, checks the action code settings
/// (``EmailLinkPolicy``), decides whether anything is sent (enumeration protection), mints a
/// one-time code (stored only as its keyed hash, with the address, mode and settings), builds
/// the link on the configured link domain, renders the localised message and delivers it
/// through the providers in order.
///
/// The request is recorded `sending` before the provider call and `sent` right after, so a
/// redelivery sends nothing again; the only window for a second email is a crash between
/// the provider's acceptance and that record (counted in `uncertain_sends`).
///
/// `email.code` jobs (a one-time numeric code instead of a link) are decided and sent by
/// `EmailHandler+Code.swift`, through the same templates, providers and send limits.
public struct EmailHandler: JobHandler {
    /// `email.action` and `email.code`, both on queue `herald.email`.
    public typealias Job = EmailJob

    public let configuration: EmailConfiguration
    let policy: EmailLinkPolicy
    let hasher: SecretHasher
    let templates: EmailTemplates
    let providers: ProviderChain<EmailMessage, NoDetail>
    /// Where a used verify_and_change_email link's recover_email job is published (the jobs
    /// exchange of this worker's namespace).
    let jobsExchange: String
    /// Where `email.failed` goes when a request fails for good (written with that change, only
    /// if it applied).
    let eventsExchange: String
    /// Apple's private relay addresses Apple stopped forwarding to (marked by herald-apple).
    let relay: PrivateRelayAddresses
    let metrics = EmailMetrics()

    public init(configuration: EmailConfiguration, hasher: SecretHasher, templates: EmailTemplates, providers: [EmailProvider],
                topology: HeraldTopology = HeraldTopology()) {
        self.configuration = configuration
        self.jobsExchange = topology.jobsExchange
        self.eventsExchange = topology.eventsExchange
        self.policy = EmailLinkPolicy(configuration: configuration)
        self.hasher = hasher
        self.relay = PrivateRelayAddresses(hasher: hasher)
        self.templates = templates
        self.providers = ProviderChain(channel: "email", providers: providers)
    }

    /// The handler a `herald-email` process runs, from its configuration.
    public init(configuration: HeraldConfiguration) throws {
        let email = configuration.email
        let http = ProviderHTTP(timeoutMilliseconds: email.providerTimeoutMilliseconds)
        let providers: [EmailProvider] = try email.providers.map { kind throws -> EmailProvider in
            switch kind {
            case .smtp: SMTPProvider(client: try SMTPClient(configuration: email.smtp))
            case .httpMail: HTTPMailProvider(configuration: email.httpMail, http: http)
            case .outbox: OutboxEmailProvider(outbox: DevOutboxDelivery(configuration: configuration.outbox))
            }
        }
        self.init(configuration: email, hasher: SecretHasher(keyRing: try configuration.secrets.keyRing()),
                  templates: try EmailTemplates.load(directory: email.templatesDirectory, appName: email.appName), providers: providers,
                  topology: HeraldTopology(configuration.amqp, configuration.runner))
    }

    /// Modes whose link only makes sense for an existing account: for an address without
    /// one, nothing (or the no-account note) is sent. sign_in creates the account;
    /// verify_and_change_email goes to the new address, which has no account yet; recover_email
    /// to the old one, which the account no longer has.
    static func needsAccount(_ mode: EmailActionJob.Mode) -> Bool {
        mode == .resetPassword || mode == .verifyEmail
    }

    /// The recover_email job a used verify_and_change_email link enqueues (to the old address,
    /// with the same settings and locale), as the JSON body the outbox publishes. Its request_id
    /// is derived from the change's, so a repeated consume can never enqueue a second notice.
    static func recoveryJob(for job: EmailActionJob) throws -> (String, String)? {
        guard job.mode == .verifyAndChangeEmail, let oldEmail = job.oldEmail else { return nil }
        let digest = SHA256Hex.of(job.requestID)
        var settings = job.actionCodeSettings
        settings.dynamicLinkDomain = nil
        let recovery = EmailActionJob(requestID: "recover-\(digest.prefix(40))", email: EmailAddress.normalize(oldEmail),
                                      mode: .recoverEmail, locale: job.locale, actionCodeSettings: settings)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (EmailAddress.normalize(oldEmail), String(decoding: try encoder.encode(recovery), as: UTF8.self))
    }

    public func handle(_ job: EmailJob, context: JobContext) async throws -> JobOutcome {
        switch job {
        case .action(let action): try await handle(action, context: context)
        case .code(let code): try await handle(code, context: context)
        }
    }

    public func exhausted(_ job: EmailJob, reason: String, context: JobContext) -> JobOutcome {
        switch job {
        case .action(let action): exhausted(action, reason: reason, context: context)
        case .code(let code): exhausted(code, reason: reason, context: context)
        }
    }

    public func handle(_ job: EmailActionJob, context: JobContext) async throws -> JobOutcome {
        let email = EmailAddress.normalize(job.email)
        var logger = context.logger
        logger[metadataKey: "request_id"] = "\(job.requestID)"
        logger[metadataKey: "email"] = "\(Redact.email(email))"
        logger[metadataKey: "mode"] = "\(job.mode.rawValue)"

        let approved: EmailLinkPolicy.Approved
        do {
            approved = try policy.approve(job.actionCodeSettings)
        } catch {
            metrics.decision("refused")
            logger.notice("email action refused", metadata: ["reason": "\(error.reason)"])
            throw JobFailure.invalid("action_code_settings: \(error.reason)")
        }
        if job.actionCodeSettings.dynamicLinkDomain != nil {
            logger.warning("dynamic_link_domain is deprecated and ignored; use link_domain")
        }
        if PrivateRelayAddresses.isRelay(email), try await relay.isUndeliverable(email, client: context.database, logger: logger) {
            return relayDisabled(job, email: email, context: context, logger: logger)
        }

        var kind = job.mode.rawValue
        var code: Secret? = SecretGenerator.token(bytes: 32)
        var finalState: EmailRequestState?
        if Self.needsAccount(job.mode), !(try await EmailStore.hasAccount(email, client: context.database, logger: logger)) {
            code = nil
            switch configuration.unknownAddress {
            case .silent: finalState = .noAccount
            case .notify: kind = EmailTemplates.noAccount
            }
        }
        let stored = code.map {
            EmailStore.Code(hash: hasher.hash($0, context: EmailLinkVerifier.hashContext),
                            settings: EmailLink.settingsJSON(job.actionCodeSettings, approved: approved),
                            expiresSeconds: configuration.expiry(job.mode))
        }
        let recovery = try Self.recoveryJob(for: job)
        let request = EmailStore.Request(requestID: job.requestID, messageID: context.envelope.messageID, email: email,
                                         mode: job.mode.rawValue, code: stored, ownerKey: context.ownerKey, finalState: finalState,
                                         pairedEmail: recovery?.0, recoveryJob: recovery?.1, recoveryExchange: recovery.map { _ in jobsExchange },
                                         limits: configuration.limits.rateLimits(email: email, ip: job.client?.ip))
        switch try await EmailStore.prepare(request, client: context.database, logger: logger) {
        case .invalid(let reason):
            metrics.decision("refused")
            logger.notice("email action refused", metadata: ["reason": "\(reason)"])
            throw JobFailure.invalid(reason)
        case .busy:
            metrics.decision("busy")
            throw JobFailure.transient("email_in_progress")
        case .refused(let reason):
            // A send limit (the same whether or not the address has an account): recorded
            // failed by herald.email_prepare; email.failed tells the front API.
            metrics.decision("refused")
            metrics.refusal(reason)
            logger.notice("email action refused", metadata: ["reason": "\(reason)"])
            return .rejected(reason, events: [OutgoingEvent(name: "email.failed", payload: EmailEvent(
                requestID: job.requestID, email: Redact.email(email), mode: job.mode.rawValue, reason: reason))])
                .answering(.refused(reason, retryAfterSeconds: request.limits.retryAfterSeconds(refusedBy: reason)))
        case .done(let state):
            metrics.decision("duplicate")
            logger.info("email request already decided", metadata: ["state": "\(state.rawValue)"])
            switch state {
            case .failed: return .rejected("already failed")
            case .queued, .sending, .retrying, .sent, .noAccount, .noted: return .completed(events: [sentEvent(job, email: email)])
            }
        case .send(let uncertain):
            // Answered alike, at the same moment, whether or not the address has an account
            // (enumeration protection): the decision is committed.
            context.decided(.sending(channel: "email"))
            if finalState == .noAccount {
                // Looks exactly like a send from outside: the same outcome and the same event.
                metrics.decision("no_account")
                logger.info("no account for this address; nothing sent (enumeration protection)")
                return .completed(events: [sentEvent(job, email: email)])
            }
            if uncertain { logger.warning("an earlier try of this request may have reached a provider; sending a fresh link") }
            return try await send(job, email: email, kind: kind, code: code, approved: approved, uncertain: uncertain, context: context, logger: logger)
        }
    }

    private func send(_ job: EmailActionJob, email: String, kind: String, code: Secret?, approved: EmailLinkPolicy.Approved,
                      uncertain: Bool, context: JobContext, logger: Logger) async throws -> JobOutcome {
        let link = code.map { EmailLink.build(approved: approved, path: configuration.linkPath, mode: job.mode, code: $0, locale: job.locale) }
        let rendered = templates.render(kind, locale: job.locale, email: email, link: link, continueHost: approved.continueHost,
                                        expiresSeconds: configuration.expiry(job.mode))
        let message = EmailMessage(from: configuration.sender(to: email), replyTo: configuration.replyTo.isEmpty ? nil : configuration.replyTo,
                                   to: email, subject: rendered.subject, text: rendered.text, html: rendered.html,
                                   requestID: job.requestID, jobMessageID: context.envelope.messageID, kind: kind)
        let delivery = await providers.send(message, context: DeliveryContext(logger: logger, database: context.database))
        // Recorded at once and held while the database is away, as SMS does: a redelivery
        // then finds it and sends nothing again.
        let (id, attempts, database, metrics) = (job.requestID, delivery.attempts, context.database, metrics)
        return try await delivery.settle(in: context, accepted: {
            let state: EmailRequestState = code == nil ? .noted : .sent
            metrics.decision(state.rawValue)
            return .finished(.completed(events: [sentEvent(job, email: email)])) {
                try await EmailStore.sent(id, state: state, delivery: attempts, client: database, logger: logger)
            }
        }, refused: { refusal in
            let failure = failed(job, reason: "provider_rejected:\(refusal)", attempts: attempts, context: context)
            return .finished(.rejected(failure.reason ?? "")) {
                try await database.withTransaction(logger: logger) { try await failure.write?($0, logger) }
            }
        }, failed: { reason in
            metrics.decision("retrying")
            return .retry(reason) { try await EmailStore.retrying(id, reason: reason, attempts: attempts, client: database, logger: logger) }
        })
    }

    /// The address is one of Apple's private relay and Apple stopped forwarding to it (the user
    /// turned forwarding off, herald-apple marked it): nothing is sent. The request is recorded
    /// `failed` with reason `apple_relay_disabled` (a try waiting in a delay queue, or a
    /// recovery notice Herald queued, ends too, its code dead) and `email.failed` is emitted, in
    /// the outcome's transaction; a request another job already decided is left as it is.
    private func relayDisabled(_ job: EmailActionJob, email: String, context: JobContext, logger: Logger) -> JobOutcome {
        let reason = Self.relayDisabledReason
        metrics.decision(reason)
        logger.notice("email action refused: Apple's private relay does not forward to this address", metadata: ["reason": "\(reason)"])
        let (id, messageID, mode, exchange) = (job.requestID, context.envelope.messageID, job.mode.rawValue, eventsExchange)
        let event = OutgoingEvent(name: "email.failed", payload: EmailEvent(requestID: id, email: Redact.email(email), mode: mode, reason: reason))
        // Answered as a send: whether an address forwards tells whoever asks about its owner.
        return JobOutcome.rejected(reason) { connection, logger in
            if try await EmailStore.refused(id, messageID: messageID, email: email, mode: mode, reason: reason, on: connection, logger: logger) {
                try await EventOutbox.insert([event], exchange: exchange, on: connection, logger: logger)
            }
        }.answering(.sending(channel: "email"))
    }

    /// The outcome's reason (and `email.failed`'s) for mail to a relay address Apple does not forward to.
    public static let relayDisabledReason = "apple_relay_disabled"

    /// Dead-lettered after `runner.max_attempts`: the request ends `failed` with the reason, its
    /// code dies, and `email.failed` is emitted, committed with the ledger's `dead` record.
    public func exhausted(_ job: EmailActionJob, reason: String, context: JobContext) -> JobOutcome {
        failed(job, reason: reason, attempts: [], context: context)
    }

    /// The one way a request fails for good (a provider's final refusal, or exhaustion): its
    /// `write` records the request `failed` with its code dead and emits `email.failed`, only
    /// while this job is the request's latest try (an exhausted duplicate of a request another
    /// job sent changes nothing and emits nothing).
    func failed(_ job: EmailActionJob, reason: String, attempts: [DeliveryAttempt], context: JobContext) -> JobOutcome {
        metrics.decision("failed")
        let email = EmailAddress.normalize(job.email)
        let (id, messageID, exchange) = (job.requestID, context.envelope.messageID, eventsExchange)
        let event = OutgoingEvent(name: "email.failed", payload: EmailEvent(
            requestID: job.requestID, email: Redact.email(email), mode: job.mode.rawValue, reason: reason))
        return .rejected(reason) { connection, logger in
            if try await EmailStore.failed(id, messageID: messageID, reason: reason, attempts: attempts, on: connection, logger: logger) {
                try await EventOutbox.insert([event], exchange: exchange, on: connection, logger: logger)
            }
        }
    }

    /// `email.sent`: the same for a delivered link, a no-account note and silence, so events
    /// never tell an address with an account from one without.
    private func sentEvent(_ job: EmailActionJob, email: String) -> OutgoingEvent {
        OutgoingEvent(name: "email.sent", payload: EmailEvent(requestID: job.requestID, email: Redact.email(email), mode: job.mode.rawValue))
    }
}

/// Payload of `email.sent` and `email.failed` (the address masked).
struct EmailEvent: Encodable {
    var requestID: String
    var email: String
    var mode: String
    var reason: String?

    enum CodingKeys: String, CodingKey {
        case email, mode, reason
        case requestID = "request_id"
    }
}
