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
        let rows = try await client.query("""
            SELECT v.state, v.reason, v.phone_number, v.purpose, v.provider, v.provider_message_id, v.uncertain_sends,
                   c.status, c.attempts, c.max_attempts, to_char(c.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                   to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), coalesce(v.channel, 'sms'), f.channels, f.step,
                   to_char(f.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), nullif(c.tenant, '')
              FROM herald.sms_verifications v LEFT JOIN herald.sms_codes c ON c.id = v.code_id
                   LEFT JOIN herald.sms_fallbacks f ON f.verification_id = v.verification_id
             WHERE v.verification_id = \(id)
            """, logger: logger)
        for try await row in rows.decode((String, String?, String, String, String?, String?, Int, String?, Int?, Int?, String?, String,
                                          String, [String]?, Int?, String?, String?).self) {
            var out: [String: Any] = [
                "verification_id": id, "state": row.0, "phone": Redact.phone(row.2), "purpose": row.3,
                "uncertain_sends": row.6, "created_at": row.11,
            ]
            out["reason"] = row.1
            out["provider"] = row.4
            out["provider_message_id"] = row.5
            out["code_status"] = row.7
            out["attempts"] = row.8
            out["max_attempts"] = row.9
            out["expires_at"] = row.10
            // The tenant its code belongs to (a Twilio Verify service's sid), when it has one.
            out["tenant"] = row.16
            // The channel of the last send, and the channels still to come (while a fallback may go out).
            out["channel"] = row.12
            if let channels = row.13, let step = row.14 {
                var fallback: [String: Any] = ["channels": channels, "step": step]
                fallback["next_at"] = row.15
                out["fallback"] = fallback
            }
            out["provider_calls"] = try await SMSStore.attempts.read(id, client: client, logger: logger).map(\.record)
            return try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
        }
        return nil
    }

    /// What was decided for verification `id`, as its record says (a retried start is answered
    /// from it), with the number and purpose it was made for: nil when nothing is recorded yet.
    /// A refusal's `Retry-After` and a reuse's interval are not kept.
    public static func decision(_ id: String, client: PostgresClient, logger: Logger) async throws -> (JobDecision, phone: String, purpose: String)? {
        let rows = try await client.query("""
            SELECT state, reason, coalesce(channel, 'sms'), phone_number, purpose FROM herald.sms_verifications WHERE verification_id = \(id)
            """, logger: logger)
        for try await (state, reason, channel, phone, purpose) in rows.decode((String, String?, String, String, String).self) {
            let decision: JobDecision
            switch SMSVerificationState(rawValue: state) {
            case .reused: decision = JobDecision(status: .reused)
            case .test: decision = JobDecision(status: .test)
            case .refused: decision = .refused(reason ?? "refused")
            // A provider's refusal after the decision to send is read from the state, as before.
            case .sending, .retrying, .sent, .failed, nil: decision = .sending(channel: channel)
            }
            return (decision, phone, purpose)
        }
        return nil
    }
}
