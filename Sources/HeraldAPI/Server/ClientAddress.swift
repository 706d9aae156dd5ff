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

extension APIContext {
    /// The end user's IP for a start's per-IP limits. A server key (`assertsClientIP`) names it
    /// (`client_ip`, `DeviceIp`) or has none: its peer is the front API's server, never counted.
    /// Another key's peer (or its trusted proxies' `X-Forwarded-For`) is the end user, and it may
    /// not name one (`field`: 400) — unless `twilio`: Twilio's `DeviceIp`, which any Twilio
    /// client may send, is taken from every key, as Twilio takes it.
    func endUserIP(named given: String?, field: String, twilio: Bool = false) throws -> ClientIP? {
        let key = try requireKey()
        if !key.assertsClientIP && !twilio {
            guard given == nil else {
                throw APIFailure.invalid(field: field, reason: "\(field) is taken only from a server key (heraldctl api-keys create --asserts-client-ip)")
            }
            return clientIP
        }
        guard let given else { return key.assertsClientIP ? nil : clientIP }
        do {
            return try ClientIP(given, field: field)
        } catch {
            throw APIFailure.invalid(field: field, reason: error.reason)
        }
    }
}
