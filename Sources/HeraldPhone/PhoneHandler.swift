import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

/// `herald-sms`: decides each `sms.verification` job in PostgreSQL (``PhoneStore/prepare``:
/// re-entrancy, test numbers, rate limits), then renders the localised text, sends it
/// through the providers in order and records the outcome with the job's.
///
/// Exactly once as far as a remote API allows: a verification already sent is never sent
/// again; the code is hashed and recorded (`sending`) before the provider call, so the only
/// window for a second SMS is a crash between the provider's acceptance and our commit, and
/// the retry after it is counted (`herald_sms_uncertain_sends_total`).
public struct PhoneHandler: JobHandler {
    public typealias Job = SMSJob
    public typealias Channel = SMSVerificationJob.Channel

    public let configuration: SMSConfiguration
    let hasher: SecretHasher
    let templates: SMSTemplates
    let providers: ProviderChain<PhoneMessage, NoDetail>
    /// The WhatsApp channel's providers (`sms.whatsapp`), nil when it is not configured.
    let whatsapp: ProviderChain<PhoneMessage, NoDetail>?
    /// The voice channel's providers (`sms.voice`) and what its calls say, nil when it is not configured.
    let voice: ProviderChain<PhoneMessage, NoDetail>?
    let voiceTemplates: SMSTemplates?
    /// Seals a code that a later channel may send again (`herald.sms_fallbacks`).
    let sealer: SecretSealer
    /// The jobs exchange and the wait queues of `sms.fallback` jobs.
    let topology: HeraldTopology
    let metrics = SMSMetrics()
    let fraudGuard: FraudGuard
    let appVerifier: AppVerifier
    /// Concurrent jobs' decisions and `sent` records go to PostgreSQL together.
    let groups: PhoneGroups
    /// `runner.max_attempts`: a receipt no send attempt matches is dropped on its last one.
    let receiptAttempts: Int
    /// `sms.receipts.max_age_hours`, in seconds: how far back a receipt's attempt is looked for.
    let receiptMaxAgeSeconds: Int

    /// `eventsExchange`: the events exchange of the worker's `amqp.namespace` (the fraud
    /// guard's pauses go there); `operationTimeout`: `database.operation_timeout_seconds`, the
    /// deadline of each grouped database step.
    /// `voiceTemplates`: what a call says, with `voiceProviders`. `sealer`: the key ring's
    /// (the HMAC keys' ring, each key through HKDF: another purpose, another key).
    public init(configuration: SMSConfiguration, hasher: SecretHasher, templates: SMSTemplates, providers: [PhoneProvider],
                whatsappProviders: [PhoneProvider] = [], voiceProviders: [PhoneProvider] = [], voiceTemplates: SMSTemplates? = nil,
                sealer: SecretSealer, topology: HeraldTopology, operationTimeout: Duration, receiptAttempts: Int = RunnerConfiguration().maxAttempts) {
        self.configuration = configuration
        self.hasher = hasher
        self.templates = templates
        self.providers = ProviderChain(channel: "sms", providers: providers)
        self.whatsapp = whatsappProviders.isEmpty ? nil : ProviderChain(channel: "whatsapp", providers: whatsappProviders)
        self.voice = voiceProviders.isEmpty || voiceTemplates == nil ? nil : ProviderChain(channel: "voice", providers: voiceProviders)
        self.voiceTemplates = voiceTemplates
        self.sealer = sealer
        self.topology = topology
        let eventsExchange = topology.eventsExchange
        self.fraudGuard = FraudGuard(configuration: configuration.fraudGuard, eventsExchange: eventsExchange, timeout: operationTimeout)
        self.appVerifier = AppVerifier(configuration: configuration.appVerification)
        self.groups = PhoneGroups(timeout: operationTimeout)
        self.receiptAttempts = receiptAttempts
        self.receiptMaxAgeSeconds = configuration.receipts.maxAgeHours * 3600
    }

    /// The handler a `herald-sms` process runs, from its configuration.
    public init(configuration: HeraldConfiguration) throws {
        let sms = configuration.sms
        let http = ProviderHTTP(timeoutMilliseconds: sms.providerTimeoutMilliseconds)
        let providers: [PhoneProvider] = try sms.providers.map { kind throws(ConfigError) -> PhoneProvider in
            switch kind {
            case .twilio: TwilioProvider(configuration: sms.twilio, http: http, statusCallback: sms.receipts.enabled ? sms.receipts.twilioURL : nil)
            case .kannel: KannelProvider(configuration: sms.kannel, http: http, receipts: sms.receipts.enabled ? sms.receipts : nil)
            case .webhook: try WebhookProvider(configuration: sms.webhook, http: http,
                                               receiptURL: sms.receipts.enabled ? sms.receipts.baseURL + "/v1/receipts/webhook" : nil)
            case .outbox: OutboxSMSProvider(outbox: DevOutboxDelivery(configuration: configuration.outbox))
            }
        }
        let keyRing = try configuration.secrets.keyRing()
        let callbacks = sms.receipts.enabled ? sms.receipts.twilioURL : nil
        self.init(
            configuration: sms,
            hasher: SecretHasher(keyRing: keyRing),
            templates: try SMSTemplates.load(sms),
            providers: providers,
            whatsappProviders: sms.whatsapp.enabled ? [WhatsAppProvider(configuration: sms.whatsapp, http: http)] : [],
            voiceProviders: try sms.voice.configuredProviders.map { kind throws -> PhoneProvider in
                switch kind {
                case .twilio: TwilioVoiceProvider(twilio: sms.twilio, voice: sms.voice, http: http, statusCallback: callbacks)
                case .webhook: try WebhookProvider(configuration: sms.webhook, http: http,
                                                   receiptURL: sms.receipts.enabled ? sms.receipts.baseURL + "/v1/receipts/webhook" : nil,
                                                   kind: .voice(sms.voice))
                }
            },
            voiceTemplates: sms.voice.enabled
                ? try SMSTemplates.load(directory: sms.voice.templatesDirectory, appName: sms.appName, webOTPOrigin: "", configKey: "sms.voice.templates_dir")
                : nil,
            sealer: SecretSealer(keyRing: keyRing, purpose: "herald sms fallback code v1"),
            topology: HeraldTopology(configuration.amqp, configuration.runner),
            operationTimeout: .seconds(configuration.database.operationTimeoutSeconds),
            receiptAttempts: configuration.runner.maxAttempts)
    }

    public func handle(_ job: SMSJob, context: JobContext) async throws -> JobOutcome {
        switch job {
        case .verification(let verification): try await handle(verification, context: context)
        case .receipt(let receipt): try await self.receipt(receipt, context: context)
        case .fallback(let fallback): try await self.fallback(fallback, context: context)
        }
    }

    /// A wait queue for each channel's `sms.fallback.after_seconds`.
    public var waitSeconds: [Int] { configuration.fallback.waits }

    public func exhausted(_ job: SMSJob, reason: String, context: JobContext) -> JobOutcome {
        switch job {
        case .verification(let verification): exhausted(verification, reason: reason, context: context)
        // A receipt has no record of its own: the dead letter is it.
        case .receipt: .rejected(reason)
        case .fallback(let fallback): exhausted(fallback, reason: reason, context: context)
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
            info = read
        }
        let plan = channelPlan(job, info: info)
        if plan.channels.isEmpty, let reason = plan.refusal {
            return refused(job, phone: phone, info: info, reason: reason, logger: logger,
                           write: PhoneStore.refusedRow(job, phone: phone.e164, messageID: context.envelope.messageID, reason: reason))
        }
        if let info, let refusal = try await abuseRefusal(job, info: info, context: context, logger: logger) { return refusal }
        var limits = limits(phone: phone, clientIP: job.client?.ip, resend: true)
        if let info { configuration.regionCaps.add(to: &limits, region: info.regionCode) }
        let code = testCode.map(Secret.init) ?? SecretGenerator.numericCode(length: job.codeLength ?? configuration.codeLength)
        let request = PhoneStore.Request(
            verificationID: job.verificationID, messageID: context.envelope.messageID,
            phone: phone.e164, purpose: job.purpose.rawValue, force: job.forceResend ?? false, test: testCode != nil,
            hash: hasher.hash(code, context: PhoneVerifier.hashContext(phone: phone.e164, purpose: job.purpose.rawValue, tenant: job.tenant ?? "")),
            ttlSeconds: job.codeTTLSeconds ?? configuration.codeTTLSeconds, maxAttempts: configuration.maxAttempts,
            resendIntervalSeconds: configuration.resendIntervalSeconds, limits: limits,
            ownerKey: context.ownerKey, guessing: configuration.guessing, tenant: job.tenant ?? "",
            maxPaidSends: configuration.fallback.maxPaidSends)

        switch try await groups.prepare(request, client: context.database, logger: logger) {
        case .send(let uncertain):
            if uncertain {
                metrics.uncertainSend()
                logger.warning("an earlier try of this verification may have reached a provider; sending a fresh code")
            }
            if let info { metrics.regionSend(info.regionCode) }
            // Committed: the request that started it hears "sending" before the provider call.
            context.decided(.sending(channel: (plan.channels.first ?? .sms).rawValue))
            return try await send(job, channels: plan.channels, from: 0, phone: phone, region: info?.regionCode, code: code, context: context, logger: logger)
        case .reused:
            metrics.decision("reused")
            logger.info("a code sent moments ago answers this verification too; no SMS sent")
            return .completed().answering(JobDecision(status: .reused, resendIntervalSeconds: configuration.resendIntervalSeconds))
        case .test:
            metrics.decision("test")
            logger.info("test number: fixed code stored, no SMS sent")
            return .completed().answering(JobDecision(status: .test))
        case .refused(let reason):
            // A code past its budget of paid sends is sent again once it is used or expires: at most its TTL.
            let retryAfter = reason == "rate_limited:paid_sends" ? request.ttlSeconds : limits.retryAfterSeconds(refusedBy: reason)
            return refused(job, phone: phone, reason: reason, logger: logger, write: nil)
                .answering(.refused(reason, retryAfterSeconds: retryAfter))
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
            try await PhoneStore.exhausted(id, messageID: messageID, phone: phone, purpose: purpose, reason: reason, on: connection, logger: logger)
        }
    }

    /// Sends `code` on `channels` from `step` on: the next channel when one's providers refuse it
    /// or are all down (on a `sms.fallback` job, if the one judgment of every step lets it go:
    /// ``continuation(_:attempts:phone:region:context:logger:)``), the first acceptance ends it (docs/fallback.md). `fallback`: the run of a
    /// `sms.fallback` job, whose fallback ends when every channel refuses (the verification stays
    /// `sent`: its earlier send stands).
    func send(_ job: SMSVerificationJob, channels: [Channel], from step: Int, phone: PhoneNumber, region: String?, code: Secret,
              context: JobContext, logger: Logger, fallback: Bool = false) async throws -> JobOutcome {
        var attempts: [DeliveryAttempt] = []
        var events: [OutgoingEvent] = []
        // A channel skipped because its providers were down: the last channel's refusal then
        // does not end the verification, which is tried again (that channel with it).
        var skippedDown: String?
        for index in step..<channels.count {
            let channel = channels[index]
            guard let chain = chain(channel) else { continue }
            let (message, encoding) = message(job, channel: channel, phone: phone, region: region, code: code, messageID: context.envelope.messageID, logger: logger)
            var delivery = await chain.send(message, context: DeliveryContext(logger: logger, database: context.database))
            attempts += delivery.attempts
            delivery.attempts = attempts
            if index == channels.count - 1, case .refused(let refusal) = delivery.outcome, let skippedDown {
                delivery.outcome = .failed(reason: "\(skippedDown); \(channel.rawValue) refused (\(refusal))")
            }
            // A channel whose provider may have taken the code (a call that timed out after it was
            // written) is not down: its message may still arrive, and may be charged. The next
            // channel waits for it as after an acceptance (the send recorded, its attempt `timeout`,
            // one uncertain send): for the channel's wait, judged then as any fallback step.
            if index < channels.count - 1, case .failed = delivery.outcome, delivery.uncertain {
                logger.notice("the channel's provider may have taken the code: the next channel waits", metadata: ["channel": "\(channel.rawValue)"])
                delivery.outcome = .accepted
            }
            // Refused or down: the next channel at once. On a `sms.fallback` job, only if the one
            // judgment of every step still lets it go (an earlier send may have arrived meanwhile);
            // if not, this channel's outcome is the job's. The verification's own job judged its
            // first send once, whichever channel carries it.
            var stopped: PhoneStore.Continuation?
            if index < channels.count - 1, delivery.outcome != .accepted {
                let next = fallback ? await continuation(job, attempts: attempts, phone: phone, region: region, context: context, logger: logger) : .send
                if next == .send {
                    var reason = "failed"
                    if case .refused = delivery.outcome { reason = "refused" }
                    if case .failed(let why) = delivery.outcome { skippedDown = skippedDown ?? "\(channel.rawValue): \(why)" }
                    metrics.fallback(from: channel, to: channels[index + 1], reason: reason)
                    events.append(fallbackEvent(job, phone: phone, from: channel, to: channels[index + 1], step: index + 1, reason: reason))
                    logger.notice("the channel's providers did not take the code: the next channel", metadata: [
                        "channel": "\(channel.rawValue)", "next": "\(channels[index + 1].rawValue)", "reason": "\(reason)"])
                    continue
                }
                logger.notice("the channel's providers did not take the code, and the next channel may not go", metadata: [
                    "channel": "\(channel.rawValue)", "next": "\(channels[index + 1].rawValue)", "decision": "\(next.label)"])
                stopped = next
            }
            let arm = channels.count > 1 ? try arm(job, channels: channels, step: index, code: code, first: !fallback) : nil
            return try await settle(delivery, job: job, channel: channel, encoding: encoding, arm: arm, phone: phone, events: events,
                                    fallback: fallback, stopped: stopped, context: context, logger: logger)
        }
        // A fallback job on a worker without the remaining channels' providers (a configuration
        // that changed since the verification was planned): the fallback ends, the earlier send
        // stands. Not reached for the verification's own job: its plan holds only channels with providers.
        let (id, messageID) = (job.verificationID, context.envelope.messageID)
        metrics.decision("fallback_failed")
        return .rejected("channel_unavailable") { connection, logger in
            try await PhoneStore.fallbackExhausted(id, messageID: messageID, reason: "fallback_failed:channel_unavailable", checkOwner: false,
                                                 on: connection, logger: logger)
        }
    }

    /// One channel's message: the SMS text (its registration, app hash and WebOTP lines), the
    /// text a call says, or the WhatsApp template's code; the SMS's length (nil for the others).
    private func message(_ job: SMSVerificationJob, channel: Channel, phone: PhoneNumber, region: String?, code: Secret, messageID: String,
                         logger: Logger) -> (PhoneMessage, SMSEncoding?) {
        let rendered: RenderedSMS
        switch channel {
        case .voice:
            // Configured with the channel (voiceTemplates is set whenever voice is).
            rendered = (voiceTemplates ?? templates).render(purpose: job.purpose, locale: job.locale, code: TwilioVoiceProvider.spoken(code))
        case .whatsapp:
            rendered = templates.render(purpose: job.purpose, locale: job.locale, code: code)
        case .sms:
            rendered = templates.render(purpose: job.purpose, locale: job.locale, code: code, appID: job.client?.appID)
            if rendered.encoding.segments > 1 {
                logger.notice("the SMS needs more than one segment", metadata: [
                    "locale": "\(rendered.locale)", "encoding": "\(rendered.encoding.scheme.rawValue)",
                    "units": "\(rendered.encoding.units)", "segments": "\(rendered.encoding.segments)"])
            }
        }
        let message = PhoneMessage(to: phone.e164, text: rendered.text, code: code, locale: job.locale, maskedText: rendered.maskedText, encoding: rendered.encoding,
                                 verificationID: job.verificationID, messageID: messageID,
                                 registration: channel == .sms ? configuration.registration(region: region, key: rendered.key, locale: rendered.locale) : nil)
        return (message, channel == .sms ? rendered.encoding : nil)
    }

    /// Records how the last channel tried ended, and says so. Each outcome is recorded on its own
    /// (not in the grouped outcome transaction, whose per-job statements run one after another),
    /// and never given up: giving up would make the redelivery send again, and a `retrying` re-run
    /// at once would skip the delay queue.
    private func settle(_ delivery: ProviderChain<PhoneMessage, NoDetail>.Delivery, job: SMSVerificationJob, channel: Channel, encoding: SMSEncoding?,
                        arm: PhoneStore.Arm?, phone: PhoneNumber, events: [OutgoingEvent], fallback: Bool, stopped: PhoneStore.Continuation?,
                        context: JobContext, logger: Logger) async throws -> JobOutcome {
        let (id, messageID, attempts, database, groups, metrics) = (job.verificationID, context.envelope.messageID, delivery.attempts, context.database, groups, metrics)
        // A `sms.fallback` job's step whose next channel may not go (``continuation(_:attempts:phone:region:context:logger:)``),
        // refused or down alike: the step ends as the take ends one, the earlier send standing,
        // its calls recorded, the verification saying why when the next channel was refused. A
        // step this job no longer holds (`done`: another worker took it after this one's presence
        // lapsed) is that worker's to record: nothing is written to it from here.
        func stop(_ stopped: PhoneStore.Continuation) -> DeliveryEnd {
            if case .done = stopped { return .finished(.completed(events: events)) {} }
            let ended: String? = if case .refused(let why) = stopped { "fallback_refused:\(why)" } else { nil }
            return .finished(.completed(events: events)) {
                try await PhoneStore.fallbackFailed(id, messageID: messageID, reason: ended, attempts: attempts, client: database, logger: logger)
            }
        }
        return try await delivery.settle(in: context, accepted: {
            metrics.decision("sent")
            if delivery.uncertain { metrics.uncertainSend() }
            if let encoding { metrics.segments(encoding) }
            let sent = PhoneStore.Sent(verificationID: id, attempts: attempts, encoding: encoding, channel: channel.rawValue)
            let events = events + [sentEvent(job, phone: phone, delivery: delivery, encoding: encoding, channel: channel)]
            guard let arm else { return .finished(.completed(events: events)) { try await groups.sent(sent, client: database, logger: logger) } }
            return .finished(.completed(events: events)) {
                try await PhoneStore.sent(sent, arm: arm, fallbackJob: fallback ? messageID : nil, client: database, logger: logger)
            }
        }, refused: { refusal in
            let reason = "provider_rejected:\(refusal)"
            if fallback, let stopped { return stop(stopped) }
            if fallback {
                // The earlier channel's send stands: the verification stays `sent`, its fallback ends.
                metrics.decision("fallback_failed")
                return .finished(.rejected(reason, events: events)) {
                    try await PhoneStore.fallbackFailed(id, messageID: messageID, reason: "fallback_failed:\(refusal)", attempts: attempts,
                                                        client: database, logger: logger)
                }
            }
            metrics.decision("failed")
            return .finished(.rejected(reason, events: events + [failedEvent(job, phone: phone.e164, provider: delivery.provider, reason: reason)])) {
                try await PhoneStore.failed(id, reason: reason, attempts: attempts, client: database, logger: logger)
            }
        }, failed: { reason in
            if fallback, let stopped { return stop(stopped) }
            metrics.decision("retrying")
            if delivery.uncertain { metrics.uncertainSend() }
            if fallback {
                return .retry(reason) {
                    try await PhoneStore.fallbackRetrying(id, messageID: messageID, reason: reason, attempts: attempts, client: database, logger: logger)
                }
            }
            return .retry(reason) { try await PhoneStore.retrying(id, reason: reason, attempts: attempts, client: database, logger: logger) }
        })
    }

    private func sentEvent(_ job: SMSVerificationJob, phone: PhoneNumber, delivery: ProviderChain<PhoneMessage, NoDetail>.Delivery?, encoding: SMSEncoding?,
                           channel: Channel? = nil) -> OutgoingEvent {
        let channel = channel ?? job.channel ?? .sms
        return OutgoingEvent(name: "sms.sent", payload: SMSEvent(
            verificationID: job.verificationID, phone: Redact.phone(phone.e164), purpose: job.purpose.rawValue,
            provider: delivery?.provider, providerMessageID: delivery?.providerMessageID,
            segments: channel == .sms ? encoding?.segments : nil, encoding: channel == .sms ? encoding?.scheme.rawValue : nil,
            channel: channel.rawValue))
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

    /// The rate limits of a send to `phone` for the request from `clientIP` (none without one):
    /// `resend` on a request of the user's own, not on a fallback's step (the user asked for nothing).
    func limits(phone: PhoneNumber, clientIP: String?, resend: Bool) -> PhoneStore.Limits {
        var limits = PhoneStore.Limits()
        limits.add("phone", key: phone.e164, configuration.phoneLimit)
        if resend { limits.add("resend", key: phone.e164, configuration.resendLimit) }
        limits.add("prefix", key: phone.prefix(droppingLast: configuration.prefixDropDigits), configuration.prefixLimit)
        // Validated by the job (a job with a malformed client.ip or client_ip is dead-lettered as invalid).
        if let ip = clientIP.flatMap({ try? ClientIP($0) }) {
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
    /// `sms`, `whatsapp` or `voice` (`sms.sent`, `sms.failed`).
    var channel: String?

    enum CodingKeys: String, CodingKey {
        case phone, purpose, provider, segments, encoding, reason, region, channel
        case numberType = "number_type"
        case verificationID = "verification_id", providerMessageID = "provider_message_id"
    }
}
