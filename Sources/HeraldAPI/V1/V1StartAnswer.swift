import HeraldRuntime

/// The outputs of the two `/v1` starts, which answer a refusal alike: their generated cases
/// `tooManyRequests` and `unprocessableContent` are these.
protocol V1StartOutput {
    static func tooManyRequests(_ response: Components.Responses.V1StartRateLimited) -> Self
    static func unprocessableContent(_ response: Components.Responses.V1Refused) -> Self
}

extension Operations.StartSMSVerification.Output: V1StartOutput {}
extension Operations.SendEmailAction.Output: V1StartOutput {}

/// A `/v1` start's answer (docs/api.md, "Starts answer with the decision"): the worker's decision
/// to go ahead (200: `sending`, `reused`, `test`), `queued` when none came within
/// `api.decision_wait_ms` (202), a refusal by a limit or a pause (429 with `Retry-After`) or by a
/// policy (422 naming the field), and a job the worker can never handle as a 400 (thrown).
enum V1StartAnswer<Output: V1StartOutput> {
    case going(JobDecision)
    case queued
    /// The refusal, written as the route's output.
    case refused(Output)

    /// Which id the start's answer carries.
    enum IDKey { case verificationID, requestID }

    static func of(_ answer: JobStarts.Answer, id: String, key: IDKey) throws -> V1StartAnswer {
        guard case .decided(let decision) = answer else { return .queued }
        switch decision.status {
        case .sending, .reused, .test:
            return .going(decision)
        case .invalid:
            let reason = decision.reason ?? "invalid"
            throw APIFailure.invalid(field: field(of: reason), reason: reason)
        case .refused:
            let reason = decision.reason ?? "refused"
            func refusal(_ error: Components.Schemas.V1Refusal._ErrorPayload) -> Components.Schemas.V1Refusal {
                key == .verificationID ? .init(error: error, verificationId: id) : .init(error: error, requestId: id)
            }
            guard decision.refusal == .policy else {
                let seconds = decision.retryAfterSeconds ?? 60
                let error = refusal(.init(code: "refused", message: "refused by a limit or a pause (\(reason)): retry after \(seconds) s",
                                          reason: reason, retryAfterSeconds: seconds))
                return .refused(.tooManyRequests(.init(headers: .init(retryAfter: seconds), body: .json(.init(value1: error)))))
            }
            let error = refusal(.init(code: "refused", message: "refused by policy (\(reason))", reason: reason, field: policyField(reason)))
            return .refused(.unprocessableContent(.init(body: .json(error))))
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
