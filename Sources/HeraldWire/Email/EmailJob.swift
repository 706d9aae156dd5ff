import HeraldRuntime

/// The jobs of queue `herald.email`: the runtime's decoder picks the member by the AMQP `type`
/// property (`email.action.v1`, `email.code.v1`) and ``EmailHandler`` dispatches.
public enum EmailJob: HeraldJobFamily, Equatable {
    case action(EmailActionJob)
    case code(EmailCodeJob)

    public static let kind = JobKind.email
    public static let name = "email"
    public static let version = 1
    public static let members: [any HeraldJob.Type] = [EmailActionJob.self, EmailCodeJob.self]

    public static func wrap(_ member: any HeraldJob) -> EmailJob? {
        switch member {
        case let job as EmailActionJob: .action(job)
        case let job as EmailCodeJob: .code(job)
        default: nil
        }
    }

    public var member: any HeraldJob {
        switch self {
        case .action(let job): job
        case .code(let job): job
        }
    }
}
