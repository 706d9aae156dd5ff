import AsyncHTTPClient
import Foundation
import HeraldRuntime
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import PostgresNIO

/// Apple's provider API over HTTP/2: `POST {host}/3/device/{token}` on the production or
/// sandbox host (per job), with the cached ES256 provider token, `apns-push-type:
/// background`, `apns-priority: 5`, `apns-topic`, `apns-expiration` and an `apns-id` that
/// APNs echoes. Requests are spread over `push.apns.connections` HTTP/2 connections, each
/// carrying many concurrent streams (AsyncHTTPClient multiplexes up to the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS`).
public struct APNsProvider: DeliveryProvider {
    public let configuration: PushConfiguration.APNs
    public let tokens: APNsTokenCache?
    let connections: APNsConnections
    public var name: String { "apns" }

    /// `tokens` nil: no key configured; every push fails transiently (`apns_not_configured`).
    public init(configuration: PushConfiguration.APNs, tokens: APNsTokenCache?) throws {
        self.configuration = configuration
        self.tokens = tokens
        self.connections = try APNsConnections.shared(caFile: configuration.caFile, count: configuration.connections,
                                                      streamsPerConnection: configuration.streamsPerConnection)
    }

    public func send(_ message: PushMessage, context: DeliveryContext) async -> ProviderAnswer<InvalidToken> {
        await push(message, logger: context.logger).chainAnswer
    }

    /// One push, with one retry after a refresh when our credentials were refused.
    public func push(_ message: PushMessage, logger: Logger) async -> PushProviderResponse {
        guard let tokens else { return PushProviderResponse(.transient("apns_not_configured")) }
        let token = await tokens.token()
        let first = await post(message, jwt: token, logger: logger)
        guard case .credentialsRefused(let why) = first.answer else { return first }
        // Expired or refused provider token: sign a new one, try once more.
        logger.warning("APNs refused the provider token; signing a new one and retrying once", metadata: ["apns_reason": "\(why)"])
        tokens.invalidate(token)
        let second = await post(message, jwt: await tokens.token(), logger: logger)
        if case .credentialsRefused(let again) = second.answer {
            logger.error("APNs refused a freshly signed provider token: check push.apns.key, key_id and team_id (the key may be revoked)",
                         metadata: ["apns_reason": "\(again)", "alert": "apns_provider_token"])
            return PushProviderResponse(.transient("apns_provider_token_refused:\(again)"), httpStatus: second.httpStatus)
        }
        return second
    }

    /// The payload: `{"aps":{"content-available":1}, <payload_key>: {receipt, secret}}`.
    public static func payload(_ message: PushMessage, key: String) -> [UInt8] {
        let object: [String: Any] = ["aps": ["content-available": 1], key: ["receipt": message.receipt, "secret": message.secret.revealed]]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
    }

    /// Apple's limit for a background push.
    public static let maxPayloadBytes = 4096


    private func post(_ message: PushMessage, jwt: String, logger: Logger) async -> PushProviderResponse {
        let body = Self.payload(message, key: configuration.payloadKey)
        guard body.count <= Self.maxPayloadBytes else { return PushProviderResponse(.rejected("PayloadTooLarge")) }
        let host = message.environment == .production ? configuration.productionHost : configuration.sandboxHost
        var request = HTTPClientRequest(url: "\(host)/3/device/\(message.deviceToken)")
        request.method = .POST
        let apnsID = RandomID.uuid()
        request.headers.add(name: "authorization", value: "bearer \(jwt)")
        request.headers.add(name: "apns-push-type", value: "background")
        request.headers.add(name: "apns-priority", value: "5")
        request.headers.add(name: "apns-topic", value: configuration.topic.isEmpty ? message.appID : configuration.topic)
        request.headers.add(name: "apns-expiration", value: String(Int(message.expiresAt.timeIntervalSince1970)))
        request.headers.add(name: "apns-id", value: apnsID)
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body))
        let (client, lease) = connections.lease()
        defer { connections.release(lease) }
        do {
            let response = try await client.execute(request, timeout: .milliseconds(Int64(configuration.timeoutMilliseconds)), logger: logger)
            let data = try await response.body.collect(upTo: 64 * 1024)
            let json = data.readableBytes > 0 ? (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any] : nil
            let timestamp = (json?["timestamp"] as? NSNumber)?.int64Value
            let answer = PushAnswers.apns(status: Int(response.status.code), reason: json?["reason"] as? String, timestamp: timestamp,
                                          apnsID: response.headers.first(name: "apns-id") ?? apnsID)
            return PushProviderResponse(answer, httpStatus: Int(response.status.code))
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) {
            return PushProviderResponse(.timeout)
        } catch {
            return PushProviderResponse(.transient(ProviderHTTP.describe(error)))
        }
    }
}

/// The HTTP/2 clients of APNs, one connection each (AsyncHTTPClient keeps one HTTP/2
/// connection per host and queues requests when its streams are used up, so more connections
/// mean more clients). A request goes to the first connection with fewer than
/// `streamsPerConnection` requests in flight, else to the least busy: under light load one
/// connection carries everything, and the others are opened only when needed. Kept for the
/// life of the process, per CA file and limits.
final class APNsConnections: @unchecked Sendable {
    let clients: [HTTPClient]
    let streamsPerConnection: Int
    private let lock = NSLock()
    private var inFlight: [Int]

    private init(clients: [HTTPClient], streamsPerConnection: Int) {
        self.clients = clients
        self.streamsPerConnection = streamsPerConnection
        self.inFlight = Array(repeating: 0, count: clients.count)
    }

    func lease() -> (HTTPClient, Int) {
        lock.withLock {
            let index = inFlight.firstIndex { $0 < streamsPerConnection }
                ?? inFlight.indices.min { inFlight[$0] < inFlight[$1] }!
            inFlight[index] += 1
            return (clients[index], index)
        }
    }

    func release(_ index: Int) {
        lock.withLock { inFlight[index] -= 1 }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var cache: [String: APNsConnections] = [:]

    static func shared(caFile: String, count: Int, streamsPerConnection: Int) throws -> APNsConnections {
        try lock.withLock {
            let key = "\(count)|\(streamsPerConnection)|\(caFile)"
            if let found = cache[key] { return found }
            let clients = try (0..<count).map { _ in try makeClient(caFile: caFile) }
            let made = APNsConnections(clients: clients, streamsPerConnection: streamsPerConnection)
            cache[key] = made
            return made
        }
    }

    /// HTTP/2 over TLS (ALPN `h2`), no redirects, one connection per host that multiplexes.
    static func makeClient(caFile: String) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if !caFile.isEmpty {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw ConfigError(key: "push.apns.ca_file", reason: "cannot read the file it names")
            }
            tls.trustRoots = .file(caFile)
        }
        var configuration = ProviderHTTP.untraced(HTTPClient.Configuration(tlsConfiguration: tls))
        configuration.redirectConfiguration = .disallow
        configuration.httpVersion = .automatic
        configuration.connectionPool = .init(idleTimeout: .seconds(600))
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }
}
