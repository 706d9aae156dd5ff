import HeraldRuntime

/// `herald-sms`: phone verification codes by SMS, as the runtime runs it.
public enum SMSChannel: HeraldChannel {
    public typealias Section = SMSConfiguration

    public static let kind = JobKind.sms
    public static var migrations: [Migration] { SMSSchema.migrations + SMSSchema.fraudAndAppVerification + [SMSSchema.batchPrepare, SMSSchema.fraudCountsPerStatement, SMSSchema.judgeEachCounterOnce, SMSSchema.oneLockOrder] }
    public static let jobTypes: [any HeraldJob.Type] = [SMSVerificationJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> SMSHandler {
        try SMSHandler(configuration: configuration)
    }
}
