import HeraldRuntime
import HTTPTypes
import Hummingbird

/// A `/v1` start's answer (docs/api.md, "Starts answer with the decision"): 200 with the worker's
/// decision (`sending`, `reused`, `test`), 202 `queued` when none came within
/// `api.decision_wait_ms`, 429 with `Retry-After` for a limit or a pause, 422 for a policy's
/// refusal, 400 for a job the worker can never handle. `idKey` names the request's id
/// (`verification_id`, `request_id`).
enum V1StartAnswer {
    static func response(_ answer: JobStarts.Answer, idKey: String, id: String) throws -> Response {
        guard case .decided(let decision) = answer else {
            return JSONResponse.make(.accepted, [idKey: id, "status": "queued"])
        }
        switch decision.status {
        case .sending, .reused, .test:
            var out: [String: Any] = [idKey: id, "status": decision.status.rawValue]
            out["channel"] = decision.channel
            out["resend_interval_seconds"] = decision.resendIntervalSeconds
            return JSONResponse.make(.ok, out)
        case .invalid:
            let reason = decision.reason ?? "invalid"
            throw APIFailure.invalid(field: field(of: reason), reason: reason)
        case .refused:
            let reason = decision.reason ?? "refused"
            var error: [String: Any] = ["code": "refused", "reason": reason]
            var headers = HTTPFields()
            let status: HTTPResponse.Status
            if decision.refusal != .policy {
                let seconds = decision.retryAfterSeconds ?? 60
                status = .tooManyRequests
                error["retry_after_seconds"] = seconds
                error["message"] = "refused by a limit or a pause (\(reason)): retry after \(seconds) s"
                headers[.retryAfter] = String(seconds)
            } else {
                status = .unprocessableContent
                error["message"] = "refused by policy (\(reason))"
                error["field"] = policyField(reason)
            }
            return JSONResponse.make(status, ["error": error, idKey: id], headers: headers)
        }
    }

    /// The request field a policy's refusal concerns.
    static func policyField(_ reason: String) -> String? {
        switch reason.split(separator: ":").first.map(String.init) ?? reason {
        case "region_not_allowed", "number_type_not_allowed", "channel_unavailable": "phone_number"
        case "app_not_verified": "app_verification"
        default: nil
        }
    }

    /// The field a worker's `invalid` reason names first (`phone_number not a valid number`,
    /// `action_code_settings: url …`).
    static func field(of reason: String) -> String? {
        let name = reason.prefix { $0.isLetter || $0 == "_" || $0 == "." }
        return name.isEmpty || name.count == reason.count ? nil : String(name)
    }
}
