import HeraldRuntime

/// `herald-cleanup`: scheduled deletion of expired anonymous accounts, as the runtime runs it.
public enum CleanupChannel: HeraldChannel {
    public typealias Section = CleanupConfiguration

    public static let kind = JobKind.cleanup
    public static var migrations: [Migration] { CleanupMigration.all }
    public static let jobTypes: [any HeraldJob.Type] = [CleanupRunJob.self]

    public static func handler(configuration: HeraldConfiguration) throws -> CleanupHandler {
        CleanupHandler(configuration: configuration)
    }
}
