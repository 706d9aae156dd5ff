import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A local HTTP/1.1 server on loopback that stands in for a remote provider in tests,
/// benchmarks and the chaos harness. A responder decides each answer (status, body,
/// delay, or no answer at all); every request is kept for the test to inspect.
public final class StubHTTPServer: Sendable {
    public struct Request: Sendable {
        public var method: String
        /// The path and query, as sent.
        public var uri: String
        public var headers: [(String, String)]
        public var body: [UInt8]

        public var path: String { String(uri.split(separator: "?", maxSplits: 1).first ?? "") }
        public var query: [String: String] { Self.form(uri.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? "") }
        /// The body as `application/x-www-form-urlencoded` fields.
        public var form: [String: String] { Self.form(String(decoding: body, as: UTF8.self)) }
        public var bodyText: String { String(decoding: body, as: UTF8.self) }

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        static func form(_ text: String) -> [String: String] {
            var out: [String: String] = [:]
            for pair in text.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
                }
                out[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            return out
        }
    }

    public struct Response: Sendable {
        public var status: Int
        public var body: String
        public var contentType: String
        /// Answer after this long.
        public var delay: Duration
        /// Never answer (the client times out).
        public var hang: Bool
        /// More response headers (`Cache-Control`, …).
        public var headers: [(String, String)]

        public init(status: Int, body: String = "", contentType: String = "application/json", delay: Duration = .zero, hang: Bool = false,
                    headers: [(String, String)] = []) {
            self.status = status
            self.body = body
            self.contentType = contentType
            self.delay = delay
            self.hang = hang
            self.headers = headers
        }

        public static func hang() -> Response { Response(status: 0, hang: true) }
    }

    public typealias Responder = @Sendable (Request) -> Response

    /// The responder behind a reference: a closure kept in a generic box is re-abstracted on
    /// every read, and those thunks showed up as most of the stub's CPU time.
    final class ResponderRef: Sendable {
        let respond: Responder
        init(_ respond: @escaping Responder) { self.respond = respond }
    }

    private let channel: any Channel
    private let state: NIOLockedValueBox<[Request]>
    private let responder: NIOLockedValueBox<ResponderRef>
    public let port: Int

    /// Binds 127.0.0.1 on a free port (or `port`).
    public init(port: Int = 0, responder: @escaping Responder) async throws {
        let state = NIOLockedValueBox<[Request]>([])
        let box = NIOLockedValueBox(ResponderRef(responder))
        self.state = state
        self.responder = box
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(StubHandler(state: state, responder: box))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        self.port = channel.localAddress?.port ?? port
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Every request so far, oldest first.
    public var requests: [Request] { state.withLockedValue { $0 } }
    public var requestCount: Int { state.withLockedValue { $0.count } }

    /// Changes how later requests are answered (an outage, a recovery).
    public func respond(with responder: @escaping Responder) {
        self.responder.withLockedValue { $0 = ResponderRef(responder) }
    }

    public func close() async {
        try? await channel.close()
    }
}

private final class StubHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: NIOLockedValueBox<[StubHTTPServer.Request]>
    private let responder: NIOLockedValueBox<StubHTTPServer.ResponderRef>
    private var current: StubHTTPServer.Request?

    init(state: NIOLockedValueBox<[StubHTTPServer.Request]>, responder: NIOLockedValueBox<StubHTTPServer.ResponderRef>) {
        self.state = state
        self.responder = responder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            current = StubHTTPServer.Request(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: [])
        case .body(var buffer):
            current?.body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let request = current else { return }
            current = nil
            state.withLockedValue { $0.append(request) }
            let response = responder.withLockedValue { $0 }.respond(request)
            if response.hang { return }
            let bound = NIOLoopBound((context, self), eventLoop: context.eventLoop)
            let write: @Sendable () -> Void = {
                let (context, handler) = bound.value
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: response.contentType)
                headers.add(name: "Content-Length", value: String(response.body.utf8.count))
                for (name, value) in response.headers { headers.add(name: name, value: value) }
                let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
                context.write(handler.wrapOutboundOut(.head(head)), promise: nil)
                context.write(handler.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: response.body)))), promise: nil)
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
            }
            if response.delay > .zero {
                let nanos = response.delay.components.seconds * 1_000_000_000 + response.delay.components.attoseconds / 1_000_000_000
                context.eventLoop.scheduleTask(in: .nanoseconds(nanos)) { write() }
            } else {
                write()
            }
        }
    }
}
