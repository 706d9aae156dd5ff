import HeraldRuntime

/// The jobs of queue `herald.sms`: the runtime's decoder picks the member by the AMQP `type`
/// property and ``PhoneHandler`` dispatches.
public enum SMSJob: HeraldJobFamily, Equatable {
    case verification(SMSVerificationJob)
    case receipt(SMSReceiptJob)
    case fallback(SMSFallbackJob)

    public static let kind = JobKind.sms
    public static let name = "sms"
    public static let version = 1
    public static let members: [any HeraldJob.Type] = [SMSVerificationJob.self, SMSReceiptJob.self, SMSFallbackJob.self]

    public static func wrap(_ member: any HeraldJob) -> SMSJob? {
        switch member {
        case let job as SMSVerificationJob: .verification(job)
        case let job as SMSReceiptJob: .receipt(job)
        case let job as SMSFallbackJob: .fallback(job)
        default: nil
        }
    }

    public var member: any HeraldJob {
        switch self {
        case .verification(let job): job
        case .receipt(let job): job
        case .fallback(let job): job
        }
    }
}
