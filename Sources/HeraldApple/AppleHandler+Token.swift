import Foundation
import HeraldRuntime
import HeraldWire
import Logging

extension AppleHandler {
    /// `apple.token`: record `calling` (one exchange per code), exchange, check the ID token
    /// against the account's Apple identity, store the refresh token sealed. `invalid_grant`
    /// (expired or used code) and a failed check end the job `failed`; Apple down is retried;
    /// a try that stopped between the call and its record ends `uncertain`, never sent again,
    /// and so does `invalid_grant` after an earlier call that timed out (it may have used the code).
    func token(_ job: AppleTokenJob, context: JobContext, logger: Logger) async throws -> JobOutcome {
        let family = AppleJob.token(job)
        let messageID = context.envelope.messageID
        let request = AppleStore.Request(messageID: messageID, operation: .token, accountID: job.accountID, clientID: job.clientID,
                                         codeHash: AppleStore.codeHash(job.authorizationCode), step: .exchange, ownerKey: context.ownerKey)
        switch try await AppleStore.prepare(request, client: context.database, logger: logger) {
        case .call:
            break
        case .uncertain(let reason):
            logger.error("an earlier try sent this code to Apple and stopped before recording the answer; not sent again", metadata: ["reason": "\(reason)"])
            metrics.finished(.token, "uncertain")
            return .rejected(reason, events: [event("apple.token.failed", family, reason: reason)])
        case .refused(let reason):
            logger.notice("apple.token refused", metadata: ["reason": "\(reason)"])
            metrics.finished(.token, "failed")
            return .rejected(reason, events: [event("apple.token.failed", family, reason: reason)])
        case .done(let state):
            logger.info("job already decided", metadata: ["state": "\(state.rawValue)"])
            return state == .stored ? .completed(events: [event("apple.token.stored", family)]) : .rejected("already \(state.rawValue)")
        case .nothing:
            return .rejected("already nothing")
        case .busy:
            throw JobFailure.transient("apple_job_in_progress")
        case .invalid(let reason):
            throw JobFailure.invalid(reason)
        }

        guard let subject = try await AppleStore.appleIdentity(accountID: job.accountID, client: context.database, logger: logger) else {
            let reason = "no_apple_identity: the account has no apple.com identity (herald.account_providers); the code was not sent"
            try await record(context) { try await AppleStore.failed(messageID, error: "no_apple_identity", reason: reason, delivery: [], client: $0, logger: logger) }
            metrics.finished(.token, "failed")
            return .rejected(reason, events: [event("apple.token.failed", family, reason: reason)])
        }
        let exchanged = await exchange(job.authorizationCode, clientID: job.clientID, subject: subject, context: context, logger: logger)
        // An earlier call of this job that timed out may have reached Apple: then a code
        // refused as used may be one that call exchanged, its refresh token unseen.
        var usedByAnEarlierCall = false
        if case .refused("invalid_grant", _, _) = exchanged {
            usedByAnEarlierCall = (try await AppleStore.record(messageID, client: context.database, logger: logger))?.uncertainCalls ?? 0 > 0
        }
        switch exchanged {
        case .granted(let grant, let attempts):
            let sealed = try sealer.seal(grant.refreshToken, context: AppleStore.sealingContext(accountID: job.accountID, clientID: job.clientID))
            let exchange = jobsExchange
            try await record(context) {
                try await AppleStore.storeToken(messageID, accountID: job.accountID, clientID: job.clientID, sealed: sealed, jobsExchange: exchange,
                                                then: .stored, delivery: attempts, client: $0, logger: logger)
            }
            metrics.finished(.token, "stored")
            return .completed(events: [event("apple.token.stored", family)])
        case .refused(let error, _, let attempts) where usedByAnEarlierCall:
            let reason = "exchange_uncertain: an earlier call timed out and may have exchanged the code; Apple now refuses it (invalid_grant)"
            logger.error("an earlier exchange may have succeeded unseen; the job ends uncertain", metadata: ["error": "\(error)"])
            try await record(context) {
                try await AppleStore.failed(messageID, error: "exchange_uncertain", reason: reason, delivery: attempts, state: .uncertain, client: $0, logger: logger)
            }
            metrics.finished(.token, "uncertain")
            return .rejected(reason, events: [event("apple.token.failed", family, reason: reason)])
        case .refused(let error, let reason, let attempts):
            logger.warning("the authorization code was not exchanged", metadata: ["error": "\(error)"])
            try await record(context) { try await AppleStore.failed(messageID, error: error, reason: reason, delivery: attempts, client: $0, logger: logger) }
            metrics.finished(.token, "failed")
            return .rejected(reason, events: [event("apple.token.failed", family, reason: reason)])
        case .failed(let reason, let attempts):
            try await record(context) { try await AppleStore.retrying(messageID, reason: reason, delivery: attempts, client: $0, logger: logger) }
            metrics.finished(.token, "retried")
            throw JobFailure.transient(reason)
        }
    }
}
