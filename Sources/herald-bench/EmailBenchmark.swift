import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Emails per second to the local SMTP server (scripts/smtp-server.py, `discard-` recipients
/// so the server does not write them): Herald's SMTP client (pooled connections reused,
/// PIPELINING) next to a plain baseline sender in the same invocation: a blocking socket that
/// opens a connection per message and says EHLO, MAIL, RCPT, DATA, QUIT one by one, the way
/// a naive sender does. Both run `concurrency` senders at once; both without TLS, so the
/// difference is the connection reuse and pipelining. A third run is Herald's client with
/// STARTTLS and AUTH (connections reused, so TLS is paid once per connection).
func emailBenchmarks(count: Int, concurrency: Int, logger: Logger) async throws -> [BenchResult] {
    let env = ProcessInfo.processInfo.environment
    let host = env["HERALD_DEV_SMTP_HOST"] ?? "127.0.0.1"
    guard let port = env["HERALD_DEV_SMTP_PORT"].flatMap(Int.init) else {
        throw BenchFailure("HERALD_DEV_SMTP_PORT is not set (scripts/services.sh env)")
    }
    let message = EmailMessage(from: "Herald Bench <bench@herald.test>", replyTo: nil, to: "discard-bench@example.net", subject: "Sign in to Herald",
                               text: Secret(String(repeating: "The link: https://auth.example.com/__/auth/action?mode=signIn&oobCode=x\n", count: 8)),
                               html: Secret(String(repeating: "<p><a href=\"https://auth.example.com/\">Sign in</a></p>\n", count: 8)),
                               requestID: "bench", jobMessageID: "bench", kind: "sign_in")
    let raw = message.mime().revealed

    let baseline = try await measure(count: count, concurrency: concurrency, name: "baseline: plain socket, connection per message") { n in
        try PlainSMTPSender.send(host: host, port: port, from: message.envelopeFrom, to: "discard-base-\(n)@example.net", data: raw)
    }

    var plain = EmailConfiguration.SMTP()
    plain.host = host
    plain.port = port
    plain.tls = .none
    plain.poolSize = concurrency
    let client = try SMTPClient(configuration: plain)
    let reused = try await measure(count: count, concurrency: concurrency, name: "herald SMTPClient, \(concurrency) reused connections") { n in
        var copy = message
        copy.to = "discard-herald-\(n)@example.net"
        guard case .accepted = await client.send(copy, logger: logger) else { throw BenchFailure("herald SMTP send failed") }
    }
    let opened = await client.connectionsOpened
    await client.shutdown()

    var results = [baseline, reused]
    if let ca = env["HERALD_DEV_SMTP_CA"], let passwordFile = env["HERALD_DEV_SMTP_PASSWORD_FILE"],
       let password = try? String(contentsOfFile: passwordFile, encoding: .utf8) {
        var secure = plain
        secure.tls = .starttls
        secure.caFile = ca
        secure.username = env["HERALD_DEV_SMTP_USERNAME"] ?? "herald"
        secure.password = password.trimmingCharacters(in: .whitespacesAndNewlines)
        let tlsClient = try SMTPClient(configuration: secure)
        results.append(try await measure(count: count, concurrency: concurrency, name: "herald SMTPClient, STARTTLS+AUTH, reused") { n in
            var copy = message
            copy.to = "discard-tls-\(n)@example.net"
            guard case .accepted = await tlsClient.send(copy, logger: logger) else { throw BenchFailure("herald SMTP (TLS) send failed") }
        })
        await tlsClient.shutdown()
    }
    print("herald-bench email: the pooled client opened \(opened) connections for \(count) messages")
    return results
}

/// Runs `send` for 0..<count with `concurrency` at once; latency per message.
private func measure(count: Int, concurrency: Int, name: String, _ send: @escaping @Sendable (Int) async throws -> Void) async throws -> BenchResult {
    let watch = Stopwatch()
    let next = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                while true {
                    let n = next.next()
                    if n > count { return }
                    watch.start("\(n)")
                    try await send(n)
                    watch.finish("\(n)")
                }
            }
        }
        try await group.waitForAll()
    }
    return watch.result(name)
}

/// The baseline: blocking POSIX socket, one connection per message, no pipelining, no TLS.
enum PlainSMTPSender {
    static func send(host: String, port: Int, from: String, to: String, data: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw BenchFailure("connect failed") }
        var buffer = [UInt8]()
        func reply() throws -> Int {
            while true {
                // A complete reply: its last line has a space after the code.
                if let end = buffer.lastIndex(of: UInt8(ascii: "\n")) {
                    let text = String(decoding: buffer[...end], as: UTF8.self)
                    let lines = text.split(separator: "\r\n")
                    if let last = lines.last, last.count >= 4, Array(last.utf8)[3] == UInt8(ascii: " ") {
                        buffer.removeAll()
                        return Int(last.prefix(3)) ?? 0
                    }
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = read(fd, &chunk, chunk.count)
                guard n > 0 else { throw BenchFailure("connection closed") }
                buffer += chunk[0..<n]
            }
        }
        func command(_ text: String, expect: Int) throws {
            let bytes = Array((text + "\r\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { throw BenchFailure("write failed") }
                sent += n
            }
            guard try reply() == expect else { throw BenchFailure("unexpected reply to \(text.prefix(4))") }
        }
        guard try reply() == 220 else { throw BenchFailure("no greeting") }
        try command("EHLO bench", expect: 250)
        try command("MAIL FROM:<\(from)>", expect: 250)
        try command("RCPT TO:<\(to)>", expect: 250)
        try command("DATA", expect: 354)
        try command(data.replacingOccurrences(of: "\r\n.", with: "\r\n..") + ".", expect: 250)
        try command("QUIT", expect: 221)
    }
}
