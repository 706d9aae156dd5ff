import HeraldRuntime
import HeraldWire

/// `herald-cleanup`: scheduled deletion of expired anonymous accounts, as the runtime runs it.
public enum CleanupWorker: HeraldWorker {
    public typealias Section = CleanupConfiguration

    public static let kind = JobKind.cleanup
    /// Its SQL: `Sources/HeraldCleanup/SQL` (migrations and functions).
    public static let schema = SchemaGroup(name: "cleanup", files: EmbeddedSQL.files)
    public static let jobTypes: [any HeraldJob.Type] = [CleanupRunJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> CleanupHandler {
        CleanupHandler(configuration: configuration)
    }
}
