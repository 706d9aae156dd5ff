import HeraldRuntime
import HeraldWire

/// `herald-email`: email sign-in links, the other email actions and one-time email codes, as the runtime runs it.
public enum EmailWorker: HeraldWorker {
    public typealias Section = EmailConfiguration

    public static let kind = JobKind.email
    /// Its SQL: `Sources/HeraldEmail/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "email", files: EmbeddedSQL.files)
    /// The types of queue `herald.email` (``EmailJob``'s members).
    public static var jobTypes: [any HeraldJob.Type] { EmailJob.members }

    public static func handler(configuration: HeraldConfiguration) throws -> EmailHandler {
        try EmailHandler(configuration: configuration)
    }
}
