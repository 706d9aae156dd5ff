import Foundation

/// Everything a Herald process reads from `Config/herald.yaml` and the environment.
/// Every key, its default and its meaning are documented in `Config/herald.yaml`.
public struct HeraldConfiguration: Sendable {
    public var amqp: BrokerConfiguration
    public var database: DatabaseConfiguration
    public var runner: RunnerConfiguration
    public var http: OpsHTTPConfiguration
    public var log: LogConfiguration
    public var outbox: OutboxConfiguration
    public var secrets: SecretsConfiguration
    public var tracing: TracingConfiguration
    /// The channels' sections, by key; a section never loaded reads as its defaults.
    private var sections: [String: any ConfigurationSection] = [:]

    public init(
        amqp: BrokerConfiguration = .init(),
        database: DatabaseConfiguration = .init(),
        runner: RunnerConfiguration = .init(),
        http: OpsHTTPConfiguration = .init(),
        log: LogConfiguration = .init(),
        outbox: OutboxConfiguration = .init(),
        secrets: SecretsConfiguration = .init(),
        tracing: TracingConfiguration = .init()
    ) {
        self.amqp = amqp
        self.database = database
        self.runner = runner
        self.http = http
        self.log = log
        self.outbox = outbox
        self.secrets = secrets
        self.tracing = tracing
    }

    /// Reads the platform's sections and the channel `sections` given; throws the first
    /// invalid key.
    public init(source: ConfigSource, sections: [any ConfigurationSection.Type] = []) throws {
        self.amqp = try BrokerConfiguration(source: source)
        self.database = try DatabaseConfiguration(source: source)
        self.runner = try RunnerConfiguration(source: source)
        self.http = try OpsHTTPConfiguration(source: source)
        self.log = try LogConfiguration(source: source)
        self.outbox = try OutboxConfiguration(source: source)
        self.secrets = try SecretsConfiguration(source: source)
        self.tracing = try TracingConfiguration(source: source)
        for section in sections {
            self.sections[section.key] = try section.init(source: source)
        }
    }

    /// A channel's section (its defaults when it was not loaded).
    public subscript<Section: ConfigurationSection>(section: Section.Type) -> Section {
        get { sections[Section.key] as? Section ?? Section() }
        set { sections[Section.key] = newValue }
    }

    /// The file named by `--config`, else `HERALD_CONFIG`, else `Config/herald.yaml` when it
    /// exists in the working directory, else built-in defaults.
    public static func load(
        path: String?,
        sections: [any ConfigurationSection.Type] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> (HeraldConfiguration, ConfigSource) {
        var file = path ?? environment["HERALD_CONFIG"]
        if file == nil, FileManager.default.fileExists(atPath: "Config/herald.yaml") {
            file = "Config/herald.yaml"
        }
        let source = try ConfigSource(path: file, environment: environment)
        let configuration = try HeraldConfiguration(source: source, sections: sections)
        return (configuration, source)
    }

    /// An executable's configuration: ``load(path:sections:environment:)``, then a key of the
    /// file that none of `sections` (nor the platform) read is an error, as a typo would be.
    public static func loadChecked(path: String?, sections: [any ConfigurationSection.Type]) throws -> HeraldConfiguration {
        let (configuration, source) = try load(path: path, sections: sections)
        let unknown = unknownKeys(source, loaded: sections)
        if !unknown.isEmpty { throw ConfigError(key: unknown.joined(separator: ", "), reason: "unknown key (a typo?)") }
        return configuration
    }

    /// Keys of the file that nothing read: a typo, unless the key belongs to another
    /// executable's section (one file configures every worker and herald-api; each reads its own).
    public static func unknownKeys(_ source: ConfigSource, loaded sections: [any ConfigurationSection.Type]) -> [String] {
        let loaded = Set(sections.map { $0.key })
        let others = Set(JobKind.allCases.map(\.rawValue) + ["api"]).subtracting(loaded)
        return source.unknownKeys().filter { key in
            !others.contains(String(key.prefix { $0 != "." }))
        }
    }
}

/// `log.*`
public struct LogConfiguration: Sendable {
    public enum Format: String, Sendable, CaseIterable { case json, text }
    public enum Level: String, Sendable, CaseIterable { case trace, debug, info, notice, warning, error, critical }
    public var level: Level = .info
    public var format: Format = .json

    public init(level: Level = .info, format: Format = .json) {
        self.level = level
        self.format = format
    }

    init(source: ConfigSource) throws {
        self.level = try source.choice("log.level", default: Level.info)
        self.format = try source.choice("log.format", default: Format.json)
    }
}

/// `http.*`: the operations endpoint (`/healthz`, `/readyz`, `/metrics`).
public struct OpsHTTPConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 means "the default port of this worker kind" (see ``JobKind/defaultOpsPort``).
    public var port: Int = 0
    public var enabled: Bool = true

    public init(host: String = "127.0.0.1", port: Int = 0, enabled: Bool = true) {
        self.host = host
        self.port = port
        self.enabled = enabled
    }

    init(source: ConfigSource) throws {
        self.host = try source.string("http.host", default: "127.0.0.1")
        self.port = try source.int("http.port", default: 0, range: 0...65535)
        self.enabled = try source.bool("http.enabled", default: true)
    }
}

/// `outbox.*`: the dev provider that records deliveries in PostgreSQL instead of sending.
public struct OutboxConfiguration: Sendable {
    /// Simulated provider latency, so local runs and drain tests see jobs in flight.
    public var delayMilliseconds: Int = 0
    /// Where the dev outbox also writes each message in full (`sms.jsonl`, …), as the phone
    /// or mailbox would show it: the only place a dev run's codes can be read. Empty: nowhere.
    public var directory: String = ""

    public init(delayMilliseconds: Int = 0, directory: String = "") {
        self.delayMilliseconds = delayMilliseconds
        self.directory = directory
    }

    init(source: ConfigSource) throws {
        self.delayMilliseconds = try source.int("outbox.delay_ms", default: 0, range: 0...600_000)
        self.directory = try source.string("outbox.directory", default: "")
    }
}
