import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// `herald-sms`: decides each `sms.verification` job in PostgreSQL (``SMSStore/prepare``:
/// re-entrancy, test numbers, rate limits), then renders the localised text, sends it
/// through the providers in order and records the outcome with the job's.
///
/// Exactly once as far as a remote API allows: a verification already sent is never sent
/// again; the code is hashed and recorded (`sending`) before the provider call, so the only
/// window for a second SMS is a crash between the provider's acceptance and our commit, and
/// the retry after it is counted (`herald_sms_uncertain_sends_total`).
public struct SMSHandler: JobHandler {
    public typealias Job = SMSJob

    public let configuration: SMSConfiguration
    let hasher: SecretHasher
    let templates: SMSTemplates
    let providers: ProviderChain<SMSMessage, NoDetail>
    /// The WhatsApp channel's providers (`sms.whatsapp`), nil when it is not configured.
    let whatsapp: ProviderChain<SMSMessage, NoDetail>?
    let metrics = SMSMetrics()
    let fraudGuard: FraudGuard
    let appVerifier: AppVerifier
    /// Concurrent jobs' decisions and `sent` records go to PostgreSQL together.
    let groups: SMSGroups
    /// `runner.max_attempts`: a receipt no send attempt matches is dropped on its last one.
    let receiptAttempts: Int
    /// `sms.receipts.max_age_hours`, in seconds: how far back a receipt's attempt is looked for.
    let receiptMaxAgeSeconds: Int

    /// `eventsExchange`: the events exchange of the worker's `amqp.namespace` (the fraud
    /// guard's pauses go there); `operationTimeout`: `database.operation_timeout_seconds`, the
    /// deadline of each grouped database step.
    public init(configuration: SMSConfiguration, hasher: SecretHasher, templates: SMSTemplates, providers: [SMSProvider],
                whatsappProviders: [SMSProvider] = [],
                eventsExchange: String, operationTimeout: Duration, receiptAttempts: Int = RunnerConfiguration().maxAttempts) {
        self.configuration = configuration
        self.hasher = hasher
        self.templates = templates
        self.providers = ProviderChain(channel: "sms", providers: providers)
        self.whatsapp = whatsappProviders.isEmpty ? nil : ProviderChain(channel: "whatsapp", providers: whatsappProviders)
        self.fraudGuard = FraudGuard(configuration: configuration.fraudGuard, eventsExchange: eventsExchange, timeout: operationTimeout)
        self.appVerifier = AppVerifier(configuration: configuration.appVerification)
        self.groups = SMSGroups(timeout: operationTimeout)
        self.receiptAttempts = receiptAttempts
        self.receiptMaxAgeSeconds = configuration.receipts.maxAgeHours * 3600
    }

    /// The handler a `herald-sms` process runs, from its configuration.
    public init(configuration: HeraldConfiguration) throws {
        let sms = configuration.sms
        let http = ProviderHTTP(timeoutMilliseconds: sms.providerTimeoutMilliseconds)
        let providers: [SMSProvider] = try sms.providers.map { kind throws(ConfigError) -> SMSProvider in
            switch kind {
            case .twilio: TwilioProvider(configuration: sms.twilio, http: http, statusCallback: sms.receipts.enabled ? sms.receipts.twilioURL : nil)
            case .kannel: KannelProvider(configuration: sms.kannel, http: http, receipts: sms.receipts.enabled ? sms.receipts : nil)
            case .webhook: try WebhookProvider(configuration: sms.webhook, http: http,
                                               receiptURL: sms.receipts.enabled ? sms.receipts.baseURL + "/v1/receipts/webhook" : nil)
            case .outbox: OutboxSMSProvider(outbox: DevOutboxDelivery(configuration: configuration.outbox))
            }
        }
        self.init(
            configuration: sms,
            hasher: SecretHasher(keyRing: try configuration.secrets.keyRing()),
            templates: try SMSTemplates.load(sms),
            providers: providers,
            whatsappProviders: sms.whatsapp.enabled ? [WhatsAppProvider(configuration: sms.whatsapp, http: http)] : [],
            eventsExchange: HeraldTopology(configuration.amqp, configuration.runner).eventsExchange,
            operationTimeout: .seconds(configuration.database.operationTimeoutSeconds),
            receiptAttempts: configuration.runner.maxAttempts)
    }

    public func handle(_ job: SMSJob, context: JobContext) async throws -> JobOutcome {
        switch job {
        case .verification(let verification): try await handle(verification, context: context)
        case .receipt(let receipt): try await self.receipt(receipt, context: context)
        }
    }

    public func exhausted(_ job: SMSJob, reason: String, context: JobContext) -> JobOutcome {
        switch job {
        case .verification(let verification): exhausted(verification, reason: reason, context: context)
        // A receipt has no record of its own: the dead letter is it.
        case .receipt: .rejected(reason)
        }
    }

    func handle(_ job: SMSVerificationJob, context: JobContext) async throws -> JobOutcome {
        let phone: PhoneNumber
        do {
            phone = try PhoneNumber(job.phoneNumber)
        } catch {
            throw JobFailure.invalid("phone_number \(error.reason)")
        }
        var logger = context.logger
        logger[metadataKey: "verification_id"] = "\(job.verificationID)"
        logger[metadataKey: "phone"] = "\(phone)"

        // Test numbers first: they send nothing, so neither libphonenumber's reading nor the
        // region and type policy applies to them (they may be fictional, as +1 555 numbers are).
        let testCode = configuration.testNumbers[phone.e164]
        var info: PhoneNumberInfo?
        if testCode == nil {
            let read: PhoneNumberInfo
            do {
                read = try PhoneNumberClassifier.classify(phone)
            } catch {
                throw JobFailure.invalid("phone_number \(error.reason)")
            }
            logger[metadataKey: "region"] = "\(read.regionCode)"
            if let reason = configuration.numberRefusal(read) ?? (job.channel == .whatsapp && whatsapp == nil ? "channel_unavailable:whatsapp" : nil) {
                return refused(job, phone: phone, info: read, reason: reason, logger: logger,
                               write: SMSStore.refusedRow(job, phone: phone.e164, messageID: context.envelope.messageID, reason: reason))
            }
            info = read
        }
        if let info, let refusal = try await abuseRefusal(job, info: info, context: context, logger: logger) { return refusal }
        var limits = limits(for: job, phone: phone)
        if let info { configuration.regionCaps.add(to: &limits, region: info.regionCode) }
        let code = testCode.map(Secret.init) ?? SecretGenerator.numericCode(length: job.codeLength ?? configuration.codeLength)
        let request = SMSStore.Request(
            verificationID: job.verificationID, messageID: context.envelope.messageID,
            phone: phone.e164, purpose: job.purpose.rawValue, force: job.forceResend ?? false, test: testCode != nil,
            hash: hasher.hash(code, context: PhoneVerifier.hashContext(phone: phone.e164, purpose: job.purpose.rawValue)),
            ttlSeconds: job.codeTTLSeconds ?? configuration.codeTTLSeconds, maxAttempts: configuration.maxAttempts,
            resendIntervalSeconds: configuration.resendIntervalSeconds, limits: limits,
            ownerKey: context.ownerKey, guessing: configuration.guessing)

        switch try await groups.prepare(request, client: context.database, logger: logger) {
        case .send(let uncertain):
            if uncertain {
                metrics.uncertainSend()
                logger.warning("an earlier try of this verification may have reached a provider; sending a fresh code")
            }
            if let info { metrics.regionSend(info.regionCode) }
            return try await send(job, phone: phone, region: info?.regionCode, code: code, context: context, logger: logger)
        case .reused:
            metrics.decision("reused")
            logger.info("a code sent moments ago answers this verification too; no SMS sent")
            return .completed()
        case .test:
            metrics.decision("test")
            logger.info("test number: fixed code stored, no SMS sent")
            return .completed()
        case .refused(let reason):
            return refused(job, phone: phone, reason: reason, logger: logger, write: nil)
        case .done(let state):
            // Decided by an earlier delivery of this verification: nothing is sent again. Its
            // `sms.sent` may not have been committed yet (a crash after the send was recorded),
            // so a sent verification emits it again: events are at least once.
            logger.info("verification already decided", metadata: ["state": "\(state.rawValue)"])
            switch state {
            case .sent: return .completed(events: [sentEvent(job, phone: phone, delivery: nil, encoding: nil)])
            case .refused, .failed: return .rejected("already \(state.rawValue)")
            case .sending, .retrying, .reused, .test: return .completed()
            }
        case .closed:
            metrics.decision("closed")
            return .rejected("code_closed")
        case .busy:
            // Another job is calling a provider for this verification or its shared code:
            // decide again after a delay (then `done`, `reused`, or a send if that one failed).
            metrics.decision("busy")
            throw JobFailure.transient("verification_in_progress")
        case .invalid(let reason):
            // Never sent to a number (or for a purpose) the verification was not made for.
            throw JobFailure.invalid(reason)
        }
    }

    /// Out of attempts: the verification ends `failed` with the runner's reason, its code
    /// closed, and `sms.failed` tells the front API, all with the ledger's `dead`.
    func exhausted(_ job: SMSVerificationJob, reason: String, context: JobContext) -> JobOutcome {
        let phone = (try? PhoneNumber(job.phoneNumber))?.e164 ?? job.phoneNumber
        let (id, messageID, purpose) = (job.verificationID, context.envelope.messageID, job.purpose.rawValue)
        return .rejected(reason, events: [failedEvent(job, phone: phone, provider: nil, reason: reason)]) { connection, logger in
            try await SMSStore.exhausted(id, messageID: messageID, phone: phone, purpose: purpose, reason: reason, on: connection, logger: logger)
        }
    }

    private func send(_ job: SMSVerificationJob, phone: PhoneNumber, region: String?, code: Secret, context: JobContext,
                      logger: Logger) async throws -> JobOutcome {
        let rendered = templates.render(purpose: job.purpose, locale: job.locale, code: code, appID: job.client?.appID)
        let viaSMS = job.channel != .whatsapp
        if viaSMS, rendered.encoding.segments > 1 {
            logger.notice("the SMS needs more than one segment", metadata: [
                "locale": "\(rendered.locale)", "encoding": "\(rendered.encoding.scheme.rawValue)",
                "units": "\(rendered.encoding.units)", "segments": "\(rendered.encoding.segments)"])
        }
        let message = SMSMessage(to: phone.e164, text: rendered.text, code: code, locale: job.locale, maskedText: rendered.maskedText, encoding: rendered.encoding,
                                 verificationID: job.verificationID, messageID: context.envelope.messageID,
                                 registration: configuration.registration(region: region, key: rendered.key, locale: rendered.locale))
        let chain = job.channel == .whatsapp ? whatsapp ?? providers : providers
        let delivery = await chain.send(message, context: DeliveryContext(logger: logger, database: context.database))
        // Each outcome is recorded on its own (not in the grouped outcome transaction, whose
        // per-job statements run one after another), and never given up: giving up would make
        // the redelivery send again, and a `retrying` re-run at once would skip the delay queue.
        let (id, attempts, database, groups, metrics) = (job.verificationID, delivery.attempts, context.database, groups, metrics)
        return try await delivery.settle(in: context, accepted: {
            metrics.decision("sent")
            if delivery.uncertain { metrics.uncertainSend() }
            if viaSMS { metrics.segments(rendered.encoding) }
            let sent = SMSStore.Sent(verificationID: id, attempts: attempts, encoding: viaSMS ? rendered.encoding : nil)
            return .finished(.completed(events: [sentEvent(job, phone: phone, delivery: delivery, encoding: rendered.encoding)])) {
                try await groups.sent(sent, client: database, logger: logger)
            }
        }, refused: { refusal in
            metrics.decision("failed")
            let reason = "provider_rejected:\(refusal)"
            return .finished(.rejected(reason, events: [failedEvent(job, phone: phone.e164, provider: delivery.provider, reason: reason)])) {
                try await SMSStore.failed(id, reason: reason, attempts: attempts, client: database, logger: logger)
            }
        }, failed: { reason in
            metrics.decision("retrying")
            if delivery.uncertain { metrics.uncertainSend() }
            return .retry(reason) { try await SMSStore.retrying(id, reason: reason, attempts: attempts, client: database, logger: logger) }
        })
    }

    private func sentEvent(_ job: SMSVerificationJob, phone: PhoneNumber, delivery: ProviderChain<SMSMessage, NoDetail>.Delivery?, encoding: SMSEncoding?) -> OutgoingEvent {
        OutgoingEvent(name: "sms.sent", payload: SMSEvent(
            verificationID: job.verificationID, phone: Redact.phone(phone.e164), purpose: job.purpose.rawValue,
            provider: delivery?.provider, providerMessageID: delivery?.providerMessageID,
            segments: job.channel == .whatsapp ? nil : encoding?.segments, encoding: job.channel == .whatsapp ? nil : encoding?.scheme.rawValue,
            channel: (job.channel ?? .sms).rawValue))
    }

    /// `sms.failed`: a provider refused the code for good, or the job ran out of attempts.
    private func failedEvent(_ job: SMSVerificationJob, phone: String, provider: String?, reason: String) -> OutgoingEvent {
        OutgoingEvent(name: "sms.failed", payload: SMSEvent(
            verificationID: job.verificationID, phone: Redact.phone(phone), purpose: job.purpose.rawValue, provider: provider, reason: reason,
            channel: (job.channel ?? .sms).rawValue))
    }

    /// `metricReason`: the refusal's metric label when `reason` names an unbounded key (a prefix).
    func refused(_ job: SMSVerificationJob, phone: PhoneNumber, info: PhoneNumberInfo? = nil, reason: String, metricReason: String? = nil, logger: Logger,
                 write: (@Sendable (PostgresConnection, Logger) async throws -> Void)?) -> JobOutcome {
        metrics.decision("refused")
        metrics.refusal(metricReason ?? reason)
        logger.notice("SMS refused", metadata: ["reason": "\(reason)"])
        let event = OutgoingEvent(name: "sms.refused", payload: SMSEvent(
            verificationID: job.verificationID, phone: Redact.phone(phone.e164), purpose: job.purpose.rawValue, reason: reason,
            region: info?.regionCode, numberType: info?.type.rawValue))
        return .rejected(reason, events: [event], write: write)
    }

    /// The rate limits of a request; a client IP or app id the job lacks has no limit of its own.
    func limits(for job: SMSVerificationJob, phone: PhoneNumber) -> SMSStore.Limits {
        var limits = SMSStore.Limits()
        limits.add("phone", key: phone.e164, configuration.phoneLimit)
        limits.add("resend", key: phone.e164, configuration.resendLimit)
        limits.add("prefix", key: phone.prefix(droppingLast: configuration.prefixDropDigits), configuration.prefixLimit)
        // Validated by the job (a job with a malformed client.ip is dead-lettered as invalid).
        if let ip = job.client?.ip.flatMap({ try? ClientIP($0) }) {
            limits.add("ip", key: ip.limitKey(ipv6PrefixLength: configuration.ipv6PrefixLength), configuration.ipLimit)
        }
        limits.add("global", key: "", configuration.globalLimit)
        return limits
    }
}

/// Payload of `sms.sent`, `sms.failed` and `sms.refused` (the number masked).
struct SMSEvent: Encodable {
    var verificationID: String
    var phone: String
    var purpose: String
    var provider: String?
    var providerMessageID: String?
    var segments: Int?
    var encoding: String?
    var reason: String?
    /// The number's region (ISO 3166) and type, as libphonenumber reads them (`sms.refused`).
    var region: String?
    var numberType: String?
    /// `sms` or `whatsapp` (`sms.sent`, `sms.failed`).
    var channel: String?

    enum CodingKeys: String, CodingKey {
        case phone, purpose, provider, segments, encoding, reason, region, channel
        case numberType = "number_type"
        case verificationID = "verification_id", providerMessageID = "provider_message_id"
    }
}
