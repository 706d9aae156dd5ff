import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A plain-text SMTP server on loopback that offers STARTTLS and answers it with `220 ready`
/// followed, in the same write, by `injected` bytes: what a man in the middle adds so that the
/// client reads them later as answers inside TLS (CVE-2011-0411's class). It never speaks TLS:
/// it records the bytes the client sends after the 220 (a TLS ClientHello starts with 0x16)
/// and closes once it has some, or when the client closes.
public final class STARTTLSStubServer: Sendable {
    private let channel: any Channel
    private let received: NIOLockedValueBox<[[UInt8]]>
    public let port: Int

    /// `injected`: sent right after `220 ready\r\n` (empty: an honest server).
    public init(injected: String) async throws {
        let received = NIOLockedValueBox<[[UInt8]]>([])
        self.received = received
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(Handler(injected: injected, received: received))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// Per connection that reached STARTTLS, the bytes the client sent after the 220.
    public var bytesAfterSTARTTLS: [[UInt8]] { received.withLockedValue { $0 } }

    public func close() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        let injected: String
        let received: NIOLockedValueBox<[[UInt8]]>
        var pending: [UInt8] = []
        /// Index of this connection in `received` once STARTTLS was answered.
        var upgraded: Int?

        init(injected: String, received: NIOLockedValueBox<[[UInt8]]>) {
            self.injected = injected
            self.received = received
        }

        func channelActive(context: ChannelHandlerContext) {
            send(context, "220 stub ESMTP\r\n")
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
            if let upgraded {
                received.withLockedValue { $0[upgraded] += bytes }
                context.close(promise: nil)
                return
            }
            pending += bytes
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self).trimmingCharacters(in: ["\r"]).uppercased()
                pending.removeSubrange(...newline)
                if line.hasPrefix("EHLO") {
                    send(context, "250-stub\r\n250-PIPELINING\r\n250 STARTTLS\r\n")
                } else if line == "STARTTLS" {
                    let index = received.withLockedValue { $0.append([]); return $0.count - 1 }
                    upgraded = index
                    send(context, "220 ready\r\n" + injected)
                    if !pending.isEmpty {
                        let early = pending
                        received.withLockedValue { $0[index] += early }
                        context.close(promise: nil)
                    }
                    return
                } else if line == "QUIT" {
                    send(context, "221 bye\r\n")
                    context.close(promise: nil)
                    return
                } else {
                    send(context, "502 not here\r\n")
                }
            }
        }

        private func send(_ context: ChannelHandlerContext, _ text: String) {
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
        }
    }
}
