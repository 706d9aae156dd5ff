import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging

extension PhoneHandler {
    /// The channels a verification goes out on, in order: the job's `channels`, its one `channel`,
    /// or `sms.fallback`'s list for the number's region; less those the number may not take (a
    /// call's number types are its own) or Herald has no providers for. `refusal`: why the first
    /// channel left out was, for a plan left empty.
    func channelPlan(_ job: SMSVerificationJob, info: PhoneNumberInfo?) -> (channels: [Channel], refusal: String?) {
        let wanted = job.channels ?? job.channel.map { [$0] } ?? configuration.fallback.channels(region: info?.regionCode)
        var channels: [Channel] = []
        var refusal: String?
        for channel in wanted {
            let reason = chain(channel) == nil ? "channel_unavailable:\(channel.rawValue)" : info.flatMap { configuration.numberRefusal($0, channel: channel) }
            if let reason {
                refusal = refusal ?? reason
            } else {
                channels.append(channel)
            }
        }
        return (channels, refusal)
    }

    /// A channel's providers, nil when it is not configured.
    func chain(_ channel: Channel) -> ProviderChain<PhoneMessage, NoDetail>? {
        switch channel {
        case .sms: providers
        case .whatsapp: whatsapp
        case .voice: voice
        }
    }

    /// What `herald.sms_fallback_arm` needs after channel `step` of `channels` was sent: on the
    /// verification's own job (`first`), the job (without its app-verification evidence) and the
    /// code sealed to the verification id; the channel's wait and its queue.
    func arm(_ job: SMSVerificationJob, channels: [Channel], step: Int, code: Secret, first: Bool) throws -> PhoneStore.Arm {
        var stored = job
        stored.channel = nil
        stored.channels = channels
        stored.appVerification = nil
        let wait = configuration.fallback.wait(channels[step])
        return PhoneStore.Arm(channels: channels, step: step, job: first ? stored : nil,
                            code: first ? try sealer.seal(code, context: Self.sealingContext(job.verificationID)) : nil,
                            waitSeconds: wait ?? 0, exchange: topology.jobsExchange,
                            routingKey: wait.map { topology.waitRoutingKey(.sms, seconds: $0) })
    }

    /// The associated data of a verification's sealed code: it opens for that verification only.
    static func sealingContext(_ verificationID: String) -> String { "sms.fallback:\(verificationID)" }

    /// `sms.fallback`: the verification's next channel, if it is still wanted
    /// (``PhoneStore/takeFallback(_:messageID:ownerKey:limits:paused:maxPaidSends:client:logger:)``), with the code its
    /// first channel carried.
    func fallback(_ job: SMSFallbackJob, context: JobContext) async throws -> JobOutcome {
        var logger = context.logger
        logger[metadataKey: "verification_id"] = "\(job.verificationID)"
        logger[metadataKey: "step"] = "\(job.step)"
        // Judged as the first send was (issue 46): the number's limits, the per-IP limit of the
        // request that started it (not `resend`: the user asked for nothing), the fraud guard's
        // pauses, and the code's budget of paid sends.
        let number = try PhoneNumber(job.phoneNumber)
        let region = try? PhoneNumberClassifier.classify(number).regionCode
        var limits = limits(phone: number, clientIP: job.clientIP, resend: false)
        if let region { configuration.regionCaps.add(to: &limits, region: region) }
        let paused = try await pause(job.verificationID, phone: number, region: region, context: context, logger: logger)
        let stored = try await PhoneStore.takeFallback(job, messageID: context.envelope.messageID, ownerKey: context.ownerKey, limits: limits,
                                                     paused: paused, maxPaidSends: configuration.fallback.maxPaidSends,
                                                     client: context.database, logger: logger)
        metrics.fallbackDecision(stored.label)
        switch stored {
        // A retry that ends a step left `sending` by a stopped worker: that try may have reached a provider.
        case .delivered(uncertain: true), .closed(_, uncertain: true): metrics.uncertainSend()
        default: break
        }
        guard case .send(let fallback, let uncertain) = stored else {
            switch stored {
            case .busy: throw JobFailure.transient("verification_in_progress")
            case .early: throw JobFailure.transient("fallback_not_due")
            default:
                logger.info("no fallback needed", metadata: ["decision": "\(stored.label)"])
                return .completed()
            }
        }
        if uncertain {
            metrics.uncertainSend()
            logger.warning("an earlier try of this fallback may have reached a provider; sending again")
        }
        let code: Secret
        do {
            code = try sealer.open(fallback.code, context: Self.sealingContext(job.verificationID))
        } catch {
            // The key left the ring: the code cannot go out again; the earlier send stands.
            logger.error("the sealed code does not open", metadata: ["why": "\(error)"])
            return .rejected("fallback_code_unavailable") { connection, logger in
                try await PhoneStore.fallbackExhausted(job.verificationID, messageID: context.envelope.messageID, reason: "fallback_code_unavailable",
                                                     checkOwner: false, on: connection, logger: logger)
            }
        }
        let verification = fallback.job
        let phone = try PhoneNumber(verification.phoneNumber)
        let from = fallback.channels[job.step - 1]
        metrics.fallback(from: from, to: fallback.channels[job.step], reason: job.reason.rawValue)
        let event = fallbackEvent(verification, phone: phone, from: from, to: fallback.channels[job.step], step: job.step, reason: job.reason.rawValue)
        var outcome = try await send(verification, channels: fallback.channels, from: job.step, phone: phone, region: region, code: code,
                                     context: context, logger: logger, fallback: true)
        outcome.events.insert(event, at: 0)
        return outcome
    }

    /// The fraud guard's refusal of a step's send (nil: none, or the guard is off), judged as the
    /// verification's first send was without counting it again. Its request's app verification,
    /// accepted on its first send, passes a pause here too.
    func pause(_ verificationID: String, phone: PhoneNumber, region: String?, context: JobContext, logger: Logger) async throws -> String? {
        guard let region, fraudGuard.configuration.enabled else { return nil }
        let proven = try await appVerifier.accepted(verificationID, phone: phone.e164, client: context.database, logger: logger)
        let pause = try await fraudGuard.check(verificationID: verificationID, phone: phone.e164, region: region,
                                               knownHashes: KnownNumbers.hashes(phone.e164, hasher: hasher), again: true, proven: proven,
                                               client: context.database, logger: logger)
        if let pause, pause.new { noticePause(pause, logger: logger) }
        return pause?.reason
    }

    /// May the next channel go out at once, in this `sms.fallback` job, after the channel it sent on
    /// refused the code or was down? The one judgment of every step decides
    /// (functions/sms_fallback_judge.sql), on what may have changed while the provider answered: a
    /// send delivered, the code closed, the fraud guard's pause, the code's budget of paid sends; not
    /// the send limits, which the job took for the step's one send. A judgment that cannot be read
    /// (the database away) lets the channel go, as the step's own judgment did: the provider has
    /// answered, and what it did must be recorded.
    /// `attempts`: the job's calls so far; one that may have reached a provider counts against the budget.
    func continuation(_ job: SMSVerificationJob, attempts: [DeliveryAttempt], phone: PhoneNumber, region: String?, context: JobContext,
                      logger: Logger) async -> PhoneStore.Continuation {
        do {
            let paused = try await pause(job.verificationID, phone: phone, region: region, context: context, logger: logger)
            let next = try await PhoneStore.continueFallback(job.verificationID, messageID: context.envelope.messageID, ownerKey: context.ownerKey,
                                                            uncertainSends: attempts.uncertainSends, paused: paused,
                                                            maxPaidSends: configuration.fallback.maxPaidSends, client: context.database, logger: logger)
            metrics.fallbackDecision(next.label)
            return next
        } catch {
            logger.warning("the next channel's judgment could not be read: it goes, as its step was judged", metadata: ["why": "\(error)"])
            return .send
        }
    }

    /// A `sms.fallback` job out of attempts: its fallback ends (the verification stays `sent`).
    func exhausted(_ job: SMSFallbackJob, reason: String, context: JobContext) -> JobOutcome {
        let messageID = context.envelope.messageID
        return .rejected(reason) { connection, logger in
            try await PhoneStore.fallbackExhausted(job.verificationID, messageID: messageID, reason: "fallback_failed:\(reason)", on: connection, logger: logger)
        }
    }

    /// `sms.fallback`: the verification moved on from one channel to the next (the number masked).
    func fallbackEvent(_ job: SMSVerificationJob, phone: PhoneNumber, from: Channel, to: Channel, step: Int, reason: String) -> OutgoingEvent {
        OutgoingEvent(name: "sms.fallback", payload: SMSFallbackEvent(
            verificationID: job.verificationID, phone: Redact.phone(phone.e164), purpose: job.purpose.rawValue,
            fromChannel: from.rawValue, toChannel: to.rawValue, step: step, reason: reason))
    }
}

extension PhoneStore.FallbackDecision {
    /// The metric label and log word of a decision.
    var label: String {
        switch self {
        case .send: "send"
        case .busy: "busy"
        case .early: "early"
        case .done: "done"
        case .gone: "gone"
        case .closed: "closed"
        case .delivered: "delivered"
        case .refused: "refused"
        }
    }
}

extension PhoneStore.Continuation {
    /// The metric label and log word of a decision, as a `sms.fallback` job's.
    var label: String {
        switch self {
        case .send: "send"
        case .delivered: "delivered"
        case .closed: "closed"
        case .refused: "refused"
        case .done: "done"
        }
    }
}

/// Payload of `sms.fallback`.
struct SMSFallbackEvent: Encodable {
    var verificationID: String
    var phone: String
    var purpose: String
    var fromChannel: String
    var toChannel: String
    var step: Int
    /// refused, failed (the channel's providers), undelivered (a receipt), timeout (no `delivered` in time).
    var reason: String

    enum CodingKeys: String, CodingKey {
        case phone, purpose, step, reason
        case verificationID = "verification_id", fromChannel = "from_channel", toChannel = "to_channel"
    }
}
