import HeraldRuntime

/// `herald-sms`: phone verification codes by SMS, as the runtime runs it.
public enum SMSChannel: HeraldChannel {
    public typealias Section = SMSConfiguration

    public static let kind = JobKind.sms
    /// Its SQL: `Sources/HeraldSMS/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "sms", files: EmbeddedSQL.files)
    public static let jobTypes: [any HeraldJob.Type] = [SMSVerificationJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> SMSHandler {
        try SMSHandler(configuration: configuration)
    }
}
