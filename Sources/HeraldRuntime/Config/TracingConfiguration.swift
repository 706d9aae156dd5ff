import Foundation

/// `tracing.*`: OpenTelemetry traces exported over OTLP/HTTP (docs/operations.md, "Tracing").
/// Off by default, and then free: no tracer is installed and no span is made.
public struct TracingConfiguration: Sendable {
    /// OTLP/HTTP's two encodings. `http/json` is for Herald's own test receiver: swift-otel
    /// writes trace and span ids in base64 there, which the OpenTelemetry Collector refuses.
    public enum WireProtocol: String, Sendable, CaseIterable {
        case protobuf = "http/protobuf"
        case json = "http/json"
    }

    public var enabled = false
    /// The traces URL, used as it is (`…/v1/traces`).
    public var endpoint = "http://localhost:4318/v1/traces"
    public var wireProtocol: WireProtocol = .protobuf
    /// Headers of every export (`Name=value,Name=value`, values as they are, e.g. a vendor's API key): a secret,
    /// so it may be given as `headers_file` / `HERALD_TRACING_HEADERS_FILE`.
    public var headers: [(String, String)] = []
    /// One export's deadline, retries included, and the flush's at shutdown: below the 10 s the
    /// shutdown gives the services after the drain, so a collector that hangs cannot hold it.
    public var timeoutMilliseconds = 5_000
    /// The share of new traces recorded (0 to 1); a job of a recorded trace is always recorded.
    public var sampleRatio = 1.0
    /// swift-otel exports one batch of at most ``maxBatch`` spans per tick: every this long, and
    /// whenever ``maxQueue`` spans wait. So `maxBatch / batchDelay` is the most a process
    /// exports per second (20,480 by default: about 2,500 SMS jobs/s at 8 spans each).
    public var batchDelayMilliseconds = 200
    public var maxBatch = 4_096
    /// Spans waiting for export at most; more are dropped (a `herald.tracing` warning).
    public var maxQueue = 16_384
    /// `service.name`; empty: the executable's name (`herald-sms`, `herald-api`, …).
    public var serviceName = ""
    public var allowInsecureTransport = false

    public init() {}

    init(source: ConfigSource) throws {
        enabled = try source.bool("tracing.enabled", default: false)
        endpoint = try source.string("tracing.endpoint", default: endpoint)
        wireProtocol = try source.choice("tracing.protocol", default: WireProtocol.protobuf)
        headers = try Self.headers(try source.string("tracing.headers", default: "", secret: true))
        timeoutMilliseconds = try source.int("tracing.timeout_ms", default: timeoutMilliseconds, range: 100...8_000)
        sampleRatio = try source.double("tracing.sample_ratio", default: 1, range: 0...1)
        batchDelayMilliseconds = try source.int("tracing.batch_delay_ms", default: batchDelayMilliseconds, range: 10...60_000)
        maxQueue = try source.int("tracing.max_queue", default: maxQueue, range: 1...1_000_000)
        maxBatch = try source.int("tracing.max_batch", default: maxBatch, range: 1...maxQueue)
        serviceName = try source.string("tracing.service_name", default: "")
        allowInsecureTransport = try source.bool("tracing.allow_insecure_transport", default: false)
        guard enabled else { return }
        guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw ConfigError(key: "tracing.endpoint", reason: "must be an http:// or https:// URL with a host")
        }
        try ClearTextPolicy.check(url: endpoint, key: "tracing.endpoint", allowed: allowInsecureTransport, allowKey: "tracing.allow_insecure_transport")
    }

    /// `Name=value,Name=value`, each value sent as written (no percent-decoding). The error never shows a value.
    static func headers(_ text: String) throws(ConfigError) -> [(String, String)] {
        var out: [(String, String)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw ConfigError(key: "tracing.headers", reason: "must be Name=value pairs separated by commas (entry \(out.count + 1) is not)")
            }
            out.append((parts[0], parts[1]))
        }
        return out
    }
}
