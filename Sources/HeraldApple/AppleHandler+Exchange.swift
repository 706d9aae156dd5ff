import Foundation
import HeraldAppleCheck
import HeraldRuntime
import Logging

extension AppleHandler {
    /// How sending an authorization code to Apple ended.
    enum Exchange: Sendable {
        /// Apple returned tokens and the ID token passed every check.
        case granted(AppleGrant, [DeliveryAttempt])
        /// Final: Apple refused (`error` its code: invalid_grant, …) or its answer failed a check
        /// (`id_token_*`). The code is spent either way.
        case refused(error: String, reason: String, [DeliveryAttempt])
        /// Apple failed or did not answer: retried through the delay tiers.
        case failed(reason: String, [DeliveryAttempt])
    }

    /// Sends `code` to Apple's token endpoint and checks the ID token it returns with the
    /// identity-token verifier (RS256 with Apple's key, `iss`, `exp`/`iat`), its `aud` the
    /// job's client id and its `sub` the account's Apple identity (`subject`; nil when the
    /// account is gone: a revocation then takes the token of whoever it names).
    func exchange(_ code: Secret, clientID: String, subject: String?, context: JobContext, logger: Logger) async -> Exchange {
        let delivery = await chain.send(.exchange(clientID: clientID, code: code), context: DeliveryContext(logger: logger, database: context.database))
        let attempts = delivery.attempts
        switch delivery.outcome {
        case .accepted:
            guard let grant = delivery.answer?.detail else {
                return .refused(error: "malformed_token_response", reason: "apple:malformed_token_response", attempts)
            }
            let claims: AppleTokenClaims
            do {
                claims = try await verifier.claims(of: grant.idToken)
            } catch {
                return .refused(error: "id_token_\(error.code)", reason: "id_token_\(error.code): the ID token Apple returned was refused (\(error))", attempts)
            }
            guard claims.audience.contains(clientID) else {
                return .refused(error: "id_token_wrong_audience", reason: "id_token_wrong_audience: the ID token is not for the job's client_id", attempts)
            }
            if let subject, claims.subject != subject {
                return .refused(error: "id_token_sub_mismatch", reason: "id_token_sub_mismatch: the ID token's sub is not the account's Apple identity", attempts)
            }
            return .granted(grant, attempts)
        case .refused:
            let error = attempts.last?.errorCode ?? "refused"
            return .refused(error: error, reason: "apple:\(error)", attempts)
        case .failed(let reason):
            return .failed(reason: reason, attempts)
        }
    }
}
