import NIOCore

/// One side of a ``PrimaryRelay`` connection: what it reads is written to its partner (read again
/// once written, so a slow side holds the other back); either side closing closes both. Both sides
/// are on one event loop (the relay connects upstream on the inbound channel's), so no locking.
final class RelaySplice: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    let partner: Channel
    let onClose: @Sendable () -> Void

    init(partner: Channel, onClose: @escaping @Sendable () -> Void) {
        self.partner = partner
        self.onClose = onClose
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let channel = context.channel
        partner.writeAndFlush(bytes).whenComplete { result in
            if case .success = result { channel.read() } else { channel.close(promise: nil) }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose()
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
