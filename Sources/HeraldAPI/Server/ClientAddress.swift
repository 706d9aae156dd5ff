import HeraldRuntime
import NIOCore

/// The client's IP for the per-IP limits: the peer's address, or, when the peer is one of
/// `api.trusted_proxies`, the last address of `X-Forwarded-For` that is not itself a trusted
/// proxy (each proxy appends the address it got the request from; an address further left
/// could have been written by the client).
struct ClientAddress: Sendable {
    let trusted: [CIDRBlock]

    func resolve(peer: SocketAddress?, forwardedFor: [String]) -> ClientIP? {
        guard let text = peer?.ipAddress, let direct = try? ClientIP(text) else { return nil }
        guard isTrusted(direct), !forwardedFor.isEmpty else { return direct }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var last = direct
        for hop in hops.reversed() {
            guard let ip = try? ClientIP(hop) else { return last }
            last = ip
            if !isTrusted(ip) { return ip }
        }
        return last
    }

    private func isTrusted(_ ip: ClientIP) -> Bool { trusted.contains { $0.contains(ip) } }
}
