import HeraldRuntime

/// `herald-push`: app verification by silent push, as the runtime runs it.
public enum PushChannel: HeraldChannel {
    public typealias Section = PushConfiguration

    public static let kind = JobKind.push
    public static var migrations: [Migration] { PushSchema.migrations + [PushSchema.receiptConsume, PushSchema.genericPlans] }
    public static let jobTypes: [any HeraldJob.Type] = [PushVerificationJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> PushHandler {
        try PushHandler(configuration: configuration)
    }
}
