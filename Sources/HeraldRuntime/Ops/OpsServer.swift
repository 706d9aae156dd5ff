import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Prometheus
import ServiceLifecycle

/// `/healthz` (the process is alive), `/readyz` (it can take work) and `/metrics`
/// (Prometheus text format) on ``OpsHTTPConfiguration``'s host and port.
public final class OpsServer: Service, Sendable {
    private let host: String
    private let port: Int
    private let health: HealthState
    private let registry: PrometheusCollectorRegistry
    private let logger: Logger

    public init(host: String, port: Int, health: HealthState, registry: PrometheusCollectorRegistry, logger: Logger) {
        self.host = host
        self.port = port
        self.health = health
        self.registry = registry
        self.logger = logger
    }

    public func run() async throws {
        let health = self.health
        let registry = self.registry
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(OpsHTTPHandler(health: health, registry: registry))
                }
            }
            .bind(host: host, port: port).get()
        logger.info("operations endpoint listening", metadata: ["address": "\(host):\(channel.localAddress?.port ?? port)"])
        await withGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        try? await channel.close()
    }
}

private final class OpsHTTPHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let health: HealthState
    private let registry: PrometheusCollectorRegistry
    private var path = "/"

    init(health: HealthState, registry: PrometheusCollectorRegistry) {
        self.health = health
        self.registry = registry
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            path = String(head.uri.split(separator: "?").first ?? "/")
        case .body:
            break
        case .end:
            let (status, contentType, body) = respond()
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: contentType)
            headers.add(name: "Content-Length", value: String(body.count))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    private func respond() -> (HTTPResponseStatus, String, [UInt8]) {
        switch path {
        case "/healthz":
            return (.ok, "text/plain", Array("ok\n".utf8))
        case "/readyz":
            if health.ready { return (.ok, "text/plain", Array("ready\n".utf8)) }
            return (.serviceUnavailable, "text/plain", Array((health.notReadyReasons.joined(separator: ", ") + "\n").utf8))
        case "/metrics":
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return (.ok, "text/plain; version=0.0.4", buffer)
        default:
            return (.notFound, "text/plain", Array("not found\n".utf8))
        }
    }
}
