import HeraldRuntime

/// `herald-email`: email sign-in links and the other email actions, as the runtime runs it.
public enum EmailChannel: HeraldChannel {
    public typealias Section = EmailConfiguration

    public static let kind = JobKind.email
    /// Its SQL: `Sources/HeraldEmail/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "email", files: EmbeddedSQL.files)
    public static let jobTypes: [any HeraldJob.Type] = [EmailActionJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> EmailHandler {
        try EmailHandler(configuration: configuration)
    }
}
