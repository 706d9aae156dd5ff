import Foundation

/// An OpenTelemetry collector's OTLP/HTTP traces endpoint (`POST /v1/traces`) on loopback: what
/// tests and `make bench` point `tracing.endpoint` at. It refuses what a collector refuses
/// (another path 404, another content type 415, a JSON body that is not an export request 400).
/// JSON exports (`tracing.protocol: http/json`) are read into ``spans``: trace and span ids
/// arrive base64 (swift-otel writes protobuf's JSON mapping) and are kept as hex, as the OTLP
/// specification writes them. Protobuf exports (the default protocol, `make bench`) are taken
/// and counted in ``requests``, not decoded.
public final class OTLPReceiver: Sendable {
    public struct Span: Sendable, CustomStringConvertible {
        public var service: String
        public var name: String
        /// OTLP's `SpanKind`: 1 internal, 2 server, 3 client, 4 producer, 5 consumer.
        public var kind: Int
        public var traceID: String
        public var spanID: String
        /// Empty for a root span.
        public var parentSpanID: String
        /// `(traceID, spanID)` of each link.
        public var links: [(String, String)]
        /// Every value as text (`intValue` is a string in OTLP's JSON too).
        public var attributes: [String: String]
        /// 0 unset, 1 ok, 2 error.
        public var statusCode: Int
        /// Every text of the span besides its attributes: the status message, each event's name
        /// and attribute values (where an `exception.message` would be).
        public var otherTexts: [String]

        public var description: String { "\(service) \(name) kind=\(kind) trace=\(traceID) span=\(spanID) parent=\(parentSpanID)" }
    }

    public static let kinds = (internal: 1, server: 2, client: 3, producer: 4, consumer: 5)

    private let server: StubHTTPServer

    public init() async throws {
        server = try await StubHTTPServer { request in
            guard request.method == "POST", request.path == "/v1/traces" else { return .init(status: 404, body: "{}") }
            switch request.header("Content-Type")?.lowercased() {
            case "application/x-protobuf"?:
                return .init(status: 200, body: "", contentType: "application/x-protobuf")
            case let type? where type.hasPrefix("application/json"):
                guard (try? Self.parse(request.body)) != nil else { return .init(status: 400, body: #"{"error":"not an ExportTraceServiceRequest"}"#) }
                return .init(status: 200, body: "{}")
            default:
                return .init(status: 415, body: "{}")
            }
        }
    }

    /// `tracing.endpoint` for this receiver.
    public var endpoint: String { server.baseURL + "/v1/traces" }

    /// Every span received so far, in arrival order.
    public var spans: [Span] {
        server.requests.filter { $0.header("Content-Type")?.hasPrefix("application/json") == true }.compactMap { try? Self.parse($0.body) }.flatMap { $0 }
    }

    /// The export requests received (their headers: `tracing.headers`).
    public var requests: [StubHTTPServer.Request] { server.requests }

    /// How many spans the protobuf exports among `requests` held.
    public static func protobufSpanCount(_ requests: some Sequence<StubHTTPServer.Request>) -> Int {
        requests.filter { $0.header("Content-Type") == "application/x-protobuf" }.reduce(0) { total, request in
            // ExportTraceServiceRequest.resource_spans (1) → ResourceSpans.scope_spans (2) → ScopeSpans.spans (2).
            total + Protobuf.fields(request.body[...], number: 1).reduce(0) { count, resource in
                count + Protobuf.fields(resource, number: 2).reduce(0) { $0 + Protobuf.fields($1, number: 2).count }
            }
        }
    }

    public func close() async { await server.close() }

    struct Malformed: Error {}

    static func parse(_ body: [UInt8]) throws -> [Span] {
        guard let root = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let resourceSpans = root["resourceSpans"] as? [[String: Any]] else { throw Malformed() }
        var out: [Span] = []
        for resourceSpan in resourceSpans {
            let resource = attributes((resourceSpan["resource"] as? [String: Any])?["attributes"])
            for scopeSpan in resourceSpan["scopeSpans"] as? [[String: Any]] ?? [] {
                for span in scopeSpan["spans"] as? [[String: Any]] ?? [] {
                    guard let name = span["name"] as? String, let traceID = hex(span["traceId"]), let spanID = hex(span["spanId"]) else { throw Malformed() }
                    let links = (span["links"] as? [[String: Any]] ?? []).compactMap { link in
                        hex(link["traceId"]).flatMap { trace in hex(link["spanId"]).map { (trace, $0) } }
                    }
                    out.append(Span(service: resource["service.name"] ?? "", name: name, kind: span["kind"] as? Int ?? 0,
                                    traceID: traceID, spanID: spanID, parentSpanID: hex(span["parentSpanId"]) ?? "",
                                    links: links, attributes: attributes(span["attributes"]),
                                    statusCode: (span["status"] as? [String: Any])?["code"] as? Int ?? 0,
                                    otherTexts: [(span["status"] as? [String: Any])?["message"] as? String ?? ""]
                                        + (span["events"] as? [[String: Any]] ?? []).flatMap { [$0["name"] as? String ?? ""] + attributes($0["attributes"]).values }))
                }
            }
        }
        return out
    }

    private static func hex(_ value: Any?) -> String? {
        guard let text = value as? String, let data = Data(base64Encoded: text) else { return nil }
        return data.map { String(format: "%02x", $0) }.joined()
    }

    private static func attributes(_ value: Any?) -> [String: String] {
        var out: [String: String] = [:]
        for item in value as? [[String: Any]] ?? [] {
            guard let key = item["key"] as? String, let wrapped = item["value"] as? [String: Any], let first = wrapped.values.first else { continue }
            out[key] = "\(first)"
        }
        return out
    }
}
