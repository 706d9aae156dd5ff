import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire

/// `herald-sms`: phone verification codes by SMS, WhatsApp or a call, as the runtime runs it.
public enum PhoneWorker: HeraldWorker {
    public typealias Section = SMSConfiguration

    public static let kind = JobKind.sms
    /// Its SQL: `Sources/HeraldPhone/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "sms", files: EmbeddedSQL.files)
    /// The types of queue `herald.sms` (``SMSJob``'s members).
    public static var jobTypes: [any HeraldJob.Type] { SMSJob.members }

    public static func handler(configuration: HeraldConfiguration) throws -> PhoneHandler {
        try PhoneHandler(configuration: configuration)
    }
}
