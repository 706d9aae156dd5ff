import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// One SMS verification as an operator or a front API reads it (`heraldctl verify show-sms`,
/// herald-api's `GET /v1/sms/verifications/{id}`): its state, the code's status and tries, and
/// every provider call. The number is masked; the code is never there.
public enum SMSVerificationRecord {
    /// The record as a JSON object (bytes, so that it crosses tasks), or nil when there is none.
    /// Times are RFC 3339 in UTC, whole seconds (`2026-01-02T03:04:05Z`), whatever the session's time zone.
    public static func json(_ id: String, client: PostgresClient, logger: Logger) async throws -> Data? {
        guard let row = try await VerificationShow(verificationID: id).first(on: client, logger: logger) else { return nil }
        var out: [String: Any] = [
            "verification_id": id, "state": row.state, "phone": Redact.phone(row.phoneNumber), "purpose": row.purpose,
            "uncertain_sends": row.uncertainSends, "created_at": row.createdAt,
        ]
        out["reason"] = row.reason
        out["provider"] = row.provider
        out["provider_message_id"] = row.providerMessageID
        out["code_status"] = row.codeStatus
        out["attempts"] = row.attempts
        out["max_attempts"] = row.maxAttempts
        out["expires_at"] = row.expiresAt
        // The tenant its code belongs to (a Twilio Verify service's sid), when it has one.
        out["tenant"] = row.tenant
        // The channel of the last send, and the channels still to come (while a fallback may go out).
        out["channel"] = row.channel
        if let channels = row.fallbackChannels, let step = row.fallbackStep {
            var fallback: [String: Any] = ["channels": channels, "step": step]
            fallback["next_at"] = row.fallbackNextAt
            out["fallback"] = fallback
        }
        out["provider_calls"] = try await AttemptLog.sms.read(id, client: client, logger: logger).map(\.record)
        return try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
    }

    /// What was decided for verification `id`, as its record says (a retried start is answered
    /// from it), with the number and purpose it was made for: nil when nothing is recorded yet.
    /// A refusal's `Retry-After` and a reuse's interval are not kept.
    public static func decision(_ id: String, client: PostgresClient, logger: Logger) async throws -> (JobDecision, phone: String, purpose: String)? {
        guard let row = try await VerificationDecision(verificationID: id).first(on: client, logger: logger) else { return nil }
        let decision: JobDecision
        switch SMSVerificationState(rawValue: row.state) {
        case .reused: decision = JobDecision(status: .reused)
        case .test: decision = JobDecision(status: .test)
        case .refused: decision = .refused(row.reason ?? "refused")
        // A provider's refusal after the decision to send is read from the state, as before.
        case .sending, .retrying, .sent, .failed, nil: decision = .sending(channel: row.channel)
        }
        return (decision, row.phoneNumber, row.purpose)
    }
}
