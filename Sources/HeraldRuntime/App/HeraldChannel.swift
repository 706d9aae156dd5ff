/// One channel as the runtime sees it: a worker kind with its configuration section, its
/// schema group, the job types it consumes and the handler its executable runs. Each channel
/// target declares one (`SMSChannel`, …); the runtime never names them, the executables and
/// `heraldctl` do.
public protocol HeraldChannel {
    associatedtype Section: ConfigurationSection
    associatedtype Handler: JobHandler

    static var kind: JobKind { get }
    /// This channel's SQL: its module's `SQL/migrations` and `SQL/functions`, as embedded.
    static var schema: SchemaGroup { get }
    /// The job types its queue carries.
    static var jobTypes: [any HeraldJob.Type] { get }
    /// The handler a worker process runs, from the loaded configuration.
    static func handler(configuration: HeraldConfiguration) throws -> Handler
}

extension HeraldChannel {
    public static var section: any ConfigurationSection.Type { Section.self }
}
