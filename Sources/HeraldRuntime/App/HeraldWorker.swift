/// One worker kind as the runtime sees it: its configuration section, its schema group, the job
/// types it consumes and the handler its executable runs. Each worker module declares one
/// (`PhoneWorker`, …); the runtime never names them, the executables and `heraldctl` do.
public protocol HeraldWorker {
    associatedtype Section: ConfigurationSection
    associatedtype Handler: JobHandler

    static var kind: JobKind { get }
    /// This worker's SQL: its module's `SQL/migrations` and `SQL/functions`, as embedded.
    static var schema: SchemaGroup { get }
    /// The job types its queue carries.
    static var jobTypes: [any HeraldJob.Type] { get }
    /// The handler a worker process runs, from the loaded configuration.
    static func handler(configuration: HeraldConfiguration) throws -> Handler
}

extension HeraldWorker {
    public static var section: any ConfigurationSection.Type { Section.self }
}
