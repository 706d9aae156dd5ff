import Foundation
import HeraldRuntime
import HeraldWire
import Logging

extension AppleHandler {
    /// `apple.revoke`: revoke the stored token (opened from its seal) or, when none is stored,
    /// the one a fresh `authorization_code` yields (kept sealed before it is revoked, so a crash
    /// in between loses nothing); then delete it. Nothing stored and no code: completed,
    /// `nothing_to_revoke`. Apple's `invalid_grant` for a token means it is already invalid:
    /// revoked as far as anyone can tell, so it is deleted too.
    func revoke(_ job: AppleRevokeJob, context: JobContext, logger: Logger) async throws -> JobOutcome {
        let family = AppleJob.revoke(job)
        let messageID = context.envelope.messageID
        let recordContext = AppleStore.sealingContext(accountID: job.accountID, clientID: job.clientID)
        let stored = try await AppleStore.storedToken(accountID: job.accountID, clientID: job.clientID, client: context.database, logger: logger)
        let step: AppleJobStep? = stored != nil ? .revoke : job.authorizationCode == nil ? nil : .exchange
        let request = AppleStore.Request(messageID: messageID, operation: .revoke, accountID: job.accountID, clientID: job.clientID,
                                         codeHash: step == .exchange ? job.authorizationCode.map(AppleStore.codeHash) : nil,
                                         step: step, ownerKey: context.ownerKey)
        switch try await AppleStore.prepare(request, client: context.database, logger: logger) {
        case .call(let uncertain):
            if uncertain { logger.warning("an earlier revocation by this job may have reached Apple; revoking again (Apple revokes a revoked token without harm)") }
        case .uncertain(let reason), .refused(let reason):
            logger.error("apple.revoke not done", metadata: ["reason": "\(reason)"])
            metrics.finished(.revoke, "failed")
            return .rejected(reason, events: [event("apple.revoke.failed", family, reason: reason)])
        case .nothing:
            logger.notice("nothing to revoke: no token stored and no authorization_code")
            metrics.finished(.revoke, "nothing")
            return .completed()
        case .done(let state):
            logger.info("job already decided", metadata: ["state": "\(state.rawValue)"])
            switch state {
            case .revoked: return .completed(events: [event("apple.token.revoked", family)])
            case .nothing: return .completed()
            default: return .rejected("already \(state.rawValue)")
            }
        case .busy:
            throw JobFailure.transient("apple_job_in_progress")
        case .invalid(let reason):
            throw JobFailure.invalid(reason)
        }

        let token: Secret
        let nonce: [UInt8]
        if let stored {
            do {
                token = try sealer.open(stored, context: recordContext)
                nonce = stored.nonce
            } catch {
                let reason = "token_unreadable: \(error)"
                try await record(context) { try await AppleStore.failed(messageID, error: "token_unreadable", reason: reason, delivery: [], client: $0, logger: logger) }
                metrics.finished(.revoke, "failed")
                return .rejected(reason, events: [event("apple.revoke.failed", family, reason: reason)])
            }
        } else if let code = job.authorizationCode {
            let subject = try await AppleStore.appleIdentity(accountID: job.accountID, client: context.database, logger: logger)
            switch await exchange(code, clientID: job.clientID, subject: subject, context: context, logger: logger) {
            case .granted(let grant, let attempts):
                let sealed = try sealer.seal(grant.refreshToken, context: recordContext)
                let exchange = jobsExchange
                try await record(context) {
                    try await AppleStore.storeToken(messageID, accountID: job.accountID, clientID: job.clientID, sealed: sealed, jobsExchange: exchange,
                                                    then: nil, delivery: attempts, client: $0, logger: logger)
                }
                (token, nonce) = (grant.refreshToken, sealed.nonce)
            case .refused(let error, let reason, let attempts):
                try await record(context) { try await AppleStore.failed(messageID, error: error, reason: reason, delivery: attempts, client: $0, logger: logger) }
                metrics.finished(.revoke, "failed")
                return .rejected(reason, events: [event("apple.revoke.failed", family, reason: reason)])
            case .failed(let reason, let attempts):
                try await record(context) { try await AppleStore.retrying(messageID, reason: reason, delivery: attempts, client: $0, logger: logger) }
                metrics.finished(.revoke, "retried")
                throw JobFailure.transient(reason)
            }
        } else {
            return .completed()
        }

        let delivery = await chain.send(.revoke(clientID: job.clientID, refreshToken: token), context: DeliveryContext(logger: logger, database: context.database))
        let attempts = delivery.attempts
        let error = attempts.last?.errorCode ?? "refused"
        switch delivery.outcome {
        case .refused where error == "invalid_grant":
            // Apple no longer knew the token: as good as revoked.
            fallthrough
        case .accepted:
            let note = delivery.outcome == .accepted ? nil : "apple:invalid_grant: Apple no longer knew the token (revoked or expired before)"
            try await record(context) {
                try await AppleStore.revoked(messageID, accountID: job.accountID, clientID: job.clientID, nonce: nonce, reason: note,
                                             delivery: attempts, client: $0, logger: logger)
            }
            metrics.finished(.revoke, "revoked")
            return .completed(events: [event("apple.token.revoked", family, reason: note)])
        case .refused:
            let reason = "apple:\(error)"
            try await record(context) { try await AppleStore.failed(messageID, error: error, reason: reason, delivery: attempts, client: $0, logger: logger) }
            metrics.finished(.revoke, "failed")
            return .rejected(reason, events: [event("apple.revoke.failed", family, reason: reason)])
        case .failed(let reason):
            try await record(context) { try await AppleStore.retrying(messageID, reason: reason, delivery: attempts, client: $0, logger: logger) }
            metrics.finished(.revoke, "retried")
            throw JobFailure.transient(reason)
        }
    }
}
