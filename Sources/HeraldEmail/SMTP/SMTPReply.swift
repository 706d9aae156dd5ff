import HeraldRuntime
import NIOCore

/// One SMTP reply: its code and text lines (a multi-line reply has several).
public struct SMTPReply: Sendable, Equatable {
    public var code: Int
    public var lines: [String]

    public var isPositive: Bool { (200..<400).contains(code) }
    public var isTransient: Bool { (400..<500).contains(code) }

    /// `smtp-550` or `smtp-550-5.1.1` (with the enhanced status code when the server gives one):
    /// what is recorded; never the reply text, which may echo an address.
    public var recordedCode: String {
        let first = lines.first ?? ""
        let enhanced = first.split(separator: " ").first.map(String.init) ?? ""
        let parts = enhanced.split(separator: ".")
        if parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) { return "smtp-\(code)-\(enhanced)" }
        return "smtp-\(code)"
    }
}

/// Splits the byte stream into replies: `250-…` lines continue, `250 …` ends a reply.
final class SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    private var lines: [String] = []
    /// Bytes received but not yet a whole reply (a partial line, or the first lines of a
    /// multi-line reply): after STARTTLS's 220 there must be none (``SMTPClientHandler/hasPendingInput``).
    private(set) var bufferedBytes = 0
    var hasPartialReply: Bool { bufferedBytes > 0 || !lines.isEmpty }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        defer { bufferedBytes = buffer.readableBytes }
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > 16 * 1024 { throw SMTPError.protocolViolation("reply line too long") }
            return .needMoreData
        }
        var bytes = buffer.readBytes(length: newline - buffer.readerIndex + 1) ?? []
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)), (200...599).contains(code) else {
            throw SMTPError.protocolViolation("malformed reply")
        }
        lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
        if bytes.count > 3, bytes[3] == UInt8(ascii: "-") {
            if lines.count > 256 { throw SMTPError.protocolViolation("reply too long") }
            return .continue
        }
        let reply = SMTPReply(code: code, lines: lines)
        lines = []
        context.fireChannelRead(wrapInboundOut(reply))
        return .continue
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// What went wrong talking SMTP (never carries a command, which may hold credentials).
public enum SMTPError: Error, Sendable, Equatable, CustomStringConvertible {
    case timeout
    case closed
    case protocolViolation(String)
    case unexpected(SMTPReply)
    case tlsUnavailable
    /// Reply bytes arrived after STARTTLS's 220 and before TLS began: a man in the middle may
    /// have injected them to be read as answers inside TLS (CVE-2011-0411's class). Not upgraded.
    case repliesBeforeTLS
    case authUnavailable

    public var description: String {
        switch self {
        case .timeout: "timeout"
        case .closed: "connection closed"
        case .protocolViolation(let what): "protocol violation: \(what)"
        case .unexpected(let reply): reply.recordedCode
        case .tlsUnavailable: "the server does not offer STARTTLS"
        case .repliesBeforeTLS: "reply bytes followed the 220 to STARTTLS before TLS began (possible injection); not upgrading"
        case .authUnavailable: "the server offers neither AUTH PLAIN nor AUTH LOGIN"
        }
    }
}
