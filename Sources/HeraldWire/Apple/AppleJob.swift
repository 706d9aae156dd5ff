import HeraldRuntime

/// The jobs of queue `herald.apple`, one case per job type: the runtime's decoder picks the
/// type by the AMQP `type` property (``HeraldJobFamily``) and ``AppleHandler`` dispatches.
public enum AppleJob: HeraldJobFamily, Equatable {
    case token(AppleTokenJob)
    case revoke(AppleRevokeJob)
    case notification(AppleNotificationJob)

    public static let kind = JobKind.apple
    /// The family's name (metrics of a body that names no member); the members have their own.
    public static let name = "apple"
    public static let version = 1
    public static let members: [any HeraldJob.Type] = [AppleTokenJob.self, AppleRevokeJob.self, AppleNotificationJob.self]

    public static func wrap(_ member: any HeraldJob) -> AppleJob? {
        switch member {
        case let job as AppleTokenJob: .token(job)
        case let job as AppleRevokeJob: .revoke(job)
        case let job as AppleNotificationJob: .notification(job)
        default: nil
        }
    }

    public var member: any HeraldJob {
        switch self {
        case .token(let job): job
        case .revoke(let job): job
        case .notification(let job): job
        }
    }
}
