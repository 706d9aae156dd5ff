import HeraldAppleCheck
import HeraldRuntime
import HeraldWire

/// `herald-apple`: the server side of Sign in with Apple (token exchange and revocation), as
/// the runtime runs it.
public enum AppleWorker: HeraldWorker {
    public typealias Section = AppleConfiguration

    public static let kind = JobKind.apple
    /// Its SQL: `Sources/HeraldApple/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "apple", files: EmbeddedSQL.files)
    /// The types of queue `herald.apple` (``AppleJob``'s members).
    public static var jobTypes: [any HeraldJob.Type] { AppleJob.members }

    public static func handler(configuration: HeraldConfiguration) throws -> AppleHandler {
        try AppleHandler(configuration: configuration)
    }
}
