import HeraldRuntime
import HeraldWire

/// `herald-push`: app verification by silent push, as the runtime runs it.
public enum PushWorker: HeraldWorker {
    public typealias Section = PushConfiguration

    public static let kind = JobKind.push
    /// Its SQL: `Sources/HeraldPush/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "push", files: EmbeddedSQL.files)
    public static let jobTypes: [any HeraldJob.Type] = [PushVerificationJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> PushHandler {
        try PushHandler(configuration: configuration)
    }
}
