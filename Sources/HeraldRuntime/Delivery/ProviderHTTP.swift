import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Tracing

/// The HTTP side of the providers (SMS gateways, HTTP mail APIs, FCM): one request with a
/// deadline, its answer classified the same way for every provider.
public struct ProviderHTTP: Sendable {
    public let client: HTTPClient
    public let timeout: TimeAmount

    /// The providers' client, for the life of the process. It never follows a redirect: one
    /// would replay our credentials and the message (Kannel's are in the query) to another host.
    /// Up to 256 connections per provider host (AsyncHTTPClient's default is 8): every job in
    /// flight (`amqp.prefetch`, 64 by default) gets its own, instead of queueing for one of
    /// eight, where a slow provider's queue ran into `sms.provider_timeout_ms` (found by
    /// `make chaos`: SMS sent twice because the call timed out while the provider sent it).
    ///
    /// AsyncHTTPClient's own spans are off (``untraced(_:)``); ``execute(_:logger:)`` makes one.
    public static let client: HTTPClient = {
        var configuration = untraced(HTTPClient.Configuration())
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    public init(client: HTTPClient = ProviderHTTP.client, timeoutMilliseconds: Int) {
        self.client = client
        self.timeout = .milliseconds(Int64(timeoutMilliseconds))
    }

    public enum Outcome: Sendable {
        case response(status: Int, body: ByteBuffer)
        case timeout
        case unreachable(String)
    }

    /// One request, in an HTTP client span when tracing is on: method, host, port, status and
    /// `error.type`, never the URL's path or query nor a header (credentials, numbers, codes).
    public func execute(_ request: HTTPClientRequest, logger: Logger) async -> Outcome {
        await HeraldTracing.withSpan(request.method.rawValue, ofKind: .client) { span in
            let outcome = await call(request, logger: logger)
            span?.updateAttributes { attributes in
                attributes[TraceKey.httpMethod] = request.method.rawValue
                if let url = URL(string: request.url) {
                    attributes[TraceKey.serverAddress] = url.host
                    attributes[TraceKey.serverPort] = url.port ?? (url.scheme == "https" ? 443 : 80)
                }
                switch outcome {
                case .response(let status, _):
                    attributes[TraceKey.httpStatus] = status
                    if status >= 400 { attributes[TraceKey.errorType] = String(status) }
                case .timeout: attributes[TraceKey.errorType] = "timeout"
                case .unreachable: attributes[TraceKey.errorType] = "unreachable"
                }
            }
            if case .response(let status, _) = outcome, status < 400 { return outcome }
            span?.setStatus(.init(code: .error))
            return outcome
        }
    }

    private func call(_ request: HTTPClientRequest, logger: Logger) async -> Outcome {
        do {
            let response = try await client.execute(request, timeout: timeout, logger: logger)
            let body = try await response.body.collect(upTo: 256 * 1024)
            return .response(status: Int(response.status.code), body: body)
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) {
            return .timeout
        } catch {
            return .unreachable(Self.describe(error))
        }
    }

    /// `configuration` without AsyncHTTPClient's own spans: they would carry `url.full` and
    /// `url.query` as they are (a Kannel password and the message text, an APNs device token)
    /// and send `traceparent` to third parties.
    public static func untraced(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.tracing.tracer = nil
        return configuration
    }

    /// Runs `request`: no answer in time is an uncertain failure, an unreachable provider a
    /// plain one; a response is read by `answer`.
    public func send<Detail>(_ request: HTTPClientRequest, logger: Logger,
                             answer: (_ status: Int, _ body: ByteBuffer) -> ProviderAnswer<Detail>) async -> ProviderAnswer<Detail> {
        switch await execute(request, logger: logger) {
        case .timeout: return .timeout
        case .unreachable(let why): return .next(why)
        case .response(let status, let body): return answer(status, body)
        }
    }

    /// 2xx accepted (nil: the caller reads the body); 408, 429, 5xx, a redirect (not followed)
    /// and a refusal of our own credentials (401, 403) are the provider's or our problem, so the
    /// next provider is tried; any other 4xx is about the message itself and final.
    public static func classify(status: Int, code: String?) -> ProviderDisposition? {
        switch status {
        case 200..<300: return nil
        case 300..<400: return .next(code: code ?? "http-\(status)-redirect")
        case 401, 403: return .next(code: code ?? "http-\(status)-credentials")
        case 408, 429, 500...: return .next(code: code ?? "http-\(status)")
        default: return .refused(code: code ?? "http-\(status)")
        }
    }

    public static func basicAuthorization(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// `application/x-www-form-urlencoded` (WHATWG): unreserved characters as they are, space as `+`.
    public static func formEncode(_ fields: [(String, String)]) -> String {
        fields.map { "\(PercentEncoding.form.encode($0.0))=\(PercentEncoding.form.encode($0.1))" }.joined(separator: "&")
    }

    /// An error's kind without anything of the request (no URL with credentials, no body).
    public static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError { return "http-client: \(error.shortDescription)" }
        return "\(type(of: error))"
    }
}
