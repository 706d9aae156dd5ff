import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A local server that speaks Apple's push provider API: HTTP/2 over TLS (ALPN `h2`) on
/// loopback. It checks what APNs checks: the provider JWT (ES256, verified with the public
/// key; `kid`, `iss`, integer `iat` no older than an hour), the path `/3/device/<hex token>`,
/// `apns-push-type`, `apns-priority`, `apns-topic`, `apns-expiration`, the payload (JSON,
/// at most 4 KB, `aps.content-available` 1). A request that passes is answered by the
/// responder, per token, as the test configures; `apns-id` is echoed. It counts connections
/// and the peak of concurrent streams on one connection.
public final class APNsStubServer: Sendable {
    public struct Request: Sendable {
        public var token: String
        public var path: String
        /// `:authority` (the host the client aimed at).
        public var authority: String
        public var headers: [String: String]
        public var payload: [String: any Sendable]
        public var payloadBytes: Int
        /// The provider JWT as sent, and its claims once verified.
        public var jwt: String
        public var issuedAt: Int
        public var connection: Int

        public func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    public struct Response: Sendable {
        public var status: Int
        public var reason: String?
        /// 410's `timestamp`: milliseconds since 1970.
        public var timestamp: Int64?
        public var delay: Duration

        public init(status: Int = 200, reason: String? = nil, timestamp: Int64? = nil, delay: Duration = .zero) {
            self.status = status
            self.reason = reason
            self.timestamp = timestamp
            self.delay = delay
        }

        public static let ok = Response()
    }

    public typealias Responder = @Sendable (Request) -> Response

    /// What the server expects of the JWT.
    public struct Credentials: @unchecked Sendable {
        public var publicKey: P256.Signing.PublicKey
        public var keyID: String
        public var teamID: String
        public init(publicKey: P256.Signing.PublicKey, keyID: String, teamID: String) {
            self.publicKey = publicKey
            self.keyID = keyID
            self.teamID = teamID
        }
    }

    final class State: @unchecked Sendable {
        let lock = NIOLock()
        var requests: [Request] = []
        var rejected: [(String, String)] = []
        var connections = 0
        var peakStreams = 0
        var answered = 0
        var responder: Responder
        let record: Bool
        let credentials: Credentials
        init(responder: @escaping Responder, record: Bool, credentials: Credentials) {
            self.responder = responder
            self.record = record
            self.credentials = credentials
        }
    }

    private let channel: any Channel
    let state: State
    public let port: Int

    /// Binds 127.0.0.1 on a free port with the certificate and key of `tls`.
    /// `record: false` keeps no requests (benchmarks).
    public init(tls: TestTLS, credentials: Credentials, maxConcurrentStreams: Int = 1000, record: Bool = true,
                responder: @escaping Responder = { _ in .ok }) async throws {
        var configuration = TLSConfiguration.makeServerConfiguration(
            // NIOSSL reads a key file by its extension (.key is DER): the key is server-key.pem.
            certificateChain: try NIOSSLCertificate.fromPEMFile(tls.certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: tls.keyFile, format: .pem)))
        configuration.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: configuration)
        let state = State(responder: responder, record: record, credentials: credentials)
        self.state = state
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let connection = state.lock.withLock { () -> Int in
                    state.connections += 1
                    return state.connections
                }
                let streams = StreamCounter(state: state)
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                return channel.configureHTTP2Pipeline(
                    mode: .server,
                    initialLocalSettings: [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
                        HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                    ]
                ) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                        try stream.pipeline.syncOperations.addHandler(APNsStreamHandler(state: state, connection: connection, streams: streams))
                    }
                }.map { _ in }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    public var baseURL: String { "https://127.0.0.1:\(port)" }
    /// The same server by name (another `:authority`).
    public var localhostURL: String { "https://localhost:\(port)" }

    public var requests: [Request] { state.lock.withLock { state.requests } }
    public var requestCount: Int { state.lock.withLock { state.answered } }
    /// Requests refused by the server's own checks: (reason, detail).
    public var violations: [(String, String)] { state.lock.withLock { state.rejected } }
    public var connectionCount: Int { state.lock.withLock { state.connections } }
    /// The most streams open at once on one connection.
    public var peakConcurrentStreams: Int { state.lock.withLock { state.peakStreams } }

    public func respond(with responder: @escaping Responder) {
        state.lock.withLock { state.responder = responder }
    }

    public func close() async {
        try? await channel.close()
    }

    /// Checks a request as APNs would; nil when it passes, else (status, reason, detail).
    static func check(head: HTTPRequestHead, body: [UInt8], credentials: Credentials, now: Date)
        -> (Int, String, String, Request?) {
        var headers: [String: String] = [:]
        for (name, value) in head.headers { headers[name.lowercased()] = value }
        guard head.method == .POST else { return (405, "MethodNotAllowed", head.method.rawValue, nil) }
        let prefix = "/3/device/"
        guard head.uri.hasPrefix(prefix) else { return (404, "BadPath", head.uri, nil) }
        let token = String(head.uri.dropFirst(prefix.count))
        guard !token.isEmpty, token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else { return (400, "BadDeviceToken", "not hex", nil) }
        guard let authorization = headers["authorization"], authorization.lowercased().hasPrefix("bearer ") else {
            return (403, "MissingProviderToken", "", nil)
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        guard let (header, claims, signature, input) = parseJWT(jwt),
              header["alg"] as? String == "ES256", header["kid"] as? String == credentials.keyID,
              claims["iss"] as? String == credentials.teamID,
              let signatureValue = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
              credentials.publicKey.isValidSignature(signatureValue, for: input)
        else { return (403, "InvalidProviderToken", "signature, kid or iss", nil) }
        // An integer `iat`, as written (a JSON number with a fraction or exponent is refused).
        let claimsText = String(decoding: JWTText.claims(jwt), as: UTF8.self)
        guard let iat = claims["iat"] as? Int, claimsText.range(of: #""iat":[0-9]+[,}]"#, options: .regularExpression) != nil else {
            return (403, "InvalidProviderToken", "iat is not an integer", nil)
        }
        if now.timeIntervalSince1970 - Double(iat) > 3600 { return (403, "ExpiredProviderToken", "iat \(iat)", nil) }
        guard headers["apns-push-type"] == "background" else { return (400, "InvalidPushType", headers["apns-push-type"] ?? "missing", nil) }
        guard headers["apns-priority"] == "5" else { return (400, "BadPriority", headers["apns-priority"] ?? "missing", nil) }
        guard let topic = headers["apns-topic"], !topic.isEmpty else { return (400, "MissingTopic", "", nil) }
        guard let expiration = headers["apns-expiration"], Int(expiration) != nil else { return (400, "BadExpirationDate", "", nil) }
        guard body.count <= 4096 else { return (413, "PayloadTooLarge", "\(body.count)", nil) }
        guard let payload = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any],
              let aps = payload["aps"] as? [String: Any], aps["content-available"] as? Int == 1, aps["alert"] == nil
        else { return (400, "PayloadEmpty", "not a background payload", nil) }
        var sendable: [String: any Sendable] = [:]
        for (key, value) in payload {
            if let object = value as? [String: Any] {
                sendable[key] = object.mapValues { "\($0)" } as [String: String]
            } else {
                sendable[key] = "\(value)"
            }
        }
        let request = Request(token: token, path: head.uri, authority: headers["host"] ?? "", headers: headers, payload: sendable,
                              payloadBytes: body.count, jwt: jwt, issuedAt: iat, connection: 0)
        return (200, "", "", request)
    }

    static func parseJWT(_ token: String) -> ([String: Any], [String: Any], [UInt8], [UInt8])? {
        func decode(_ part: Substring) -> [UInt8]? {
            var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return Data(base64Encoded: base64).map(Array.init)
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = decode(parts[0]), let c = decode(parts[1]), let s = decode(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: Data(h))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(c))) as? [String: Any]
        else { return nil }
        return (header, claims, s, Array("\(parts[0]).\(parts[1])".utf8))
    }
}

enum JWTText {
    static func claims(_ token: String) -> [UInt8] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return [] }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map(Array.init) ?? []
    }
}

/// Streams open on one connection, for the peak.
final class StreamCounter: @unchecked Sendable {
    let state: APNsStubServer.State
    var open = 0
    init(state: APNsStubServer.State) { self.state = state }

    func opened() {
        state.lock.withLock {
            open += 1
            if open > state.peakStreams { state.peakStreams = open }
        }
    }

    func closed() { state.lock.withLock { open -= 1 } }
}

/// One HTTP/2 stream, seen through the HTTP/1 codec.
private final class APNsStreamHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let state: APNsStubServer.State
    let connection: Int
    let streams: StreamCounter
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(state: APNsStubServer.State, connection: Int, streams: StreamCounter) {
        self.state = state
        self.connection = connection
        self.streams = streams
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            streams.opened()
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let (status, reason, detail, checked) = APNsStubServer.check(head: head, body: body, credentials: state.credentials, now: Date())
            var answerWith = APNsStubServer.Response(status: status, reason: reason)
            var apnsID = head.headers.first(name: "apns-id") ?? UUID().uuidString
            if var request = checked {
                request.connection = connection
                let responder = state.lock.withLock { () -> APNsStubServer.Responder in
                    if state.record { state.requests.append(request) }
                    return state.responder
                }
                answerWith = responder(request)
            } else {
                state.lock.withLock { state.rejected.append((reason, detail)) }
            }
            if apnsID.isEmpty { apnsID = UUID().uuidString }
            let (response, echoed) = (answerWith, apnsID)
            let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
            let answer: @Sendable () -> Void = {
                let (context, handler) = bound.value
                var headers = HTTPHeaders()
                headers.add(name: "apns-id", value: echoed)
                var bytes = ByteBuffer()
                if response.status != 200 {
                    var object: [String: Any] = ["reason": response.reason ?? "InternalServerError"]
                    if let timestamp = response.timestamp { object["timestamp"] = timestamp }
                    bytes = ByteBuffer(bytes: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
                    headers.add(name: "content-type", value: "application/json")
                }
                headers.add(name: "content-length", value: String(bytes.readableBytes))
                context.write(handler.wrapOutboundOut(.head(HTTPResponseHead(version: .http2, status: .init(statusCode: response.status), headers: headers))), promise: nil)
                if bytes.readableBytes > 0 { context.write(handler.wrapOutboundOut(.body(.byteBuffer(bytes))), promise: nil) }
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
                handler.streams.closed()
                handler.state.lock.withLock { handler.state.answered += 1 }
            }
            if response.delay > .zero {
                let c = response.delay.components
                context.eventLoop.scheduleTask(in: .nanoseconds(c.seconds * 1_000_000_000 + c.attoseconds / 1_000_000_000)) { answer() }
            } else {
                answer()
            }
        }
    }
}
