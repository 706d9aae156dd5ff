import Foundation
import HeraldRuntime
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// A pool of at most `pool_size` SMTP connections, reused across messages: a message takes
/// an idle connection (or opens one), sends, and gives it back. Connections idle past
/// `idle_timeout_seconds`, refused by the server (421) or broken are closed.
public actor SMTPClient {
    public let configuration: EmailConfiguration.SMTP
    let tls: NIOSSLContext?
    let group: any EventLoopGroup
    private var idle: [SMTPConnection] = []
    private var open = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// Connections opened so far (benchmarks and tests read it to see reuse).
    public private(set) var connectionsOpened = 0

    public init(configuration: EmailConfiguration.SMTP, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.configuration = configuration
        self.group = group
        if configuration.tls == .none {
            tls = nil
        } else {
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            if !configuration.caFile.isEmpty {
                do {
                    tlsConfiguration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(configuration.caFile))
                } catch {
                    throw ConfigError(key: "email.smtp.ca_file", reason: "cannot read a PEM certificate from it")
                }
            }
            if !configuration.verifyCertificate { tlsConfiguration.certificateVerification = .none }
            tls = try NIOSSLContext(configuration: tlsConfiguration)
        }
    }

    /// How a message went.
    public enum Result: Sendable, Equatable {
        case accepted(reply: String)
        /// 5xx: final for this message.
        case rejected(code: String)
        /// 4xx, a broken connection, a TLS or AUTH failure: try again later.
        case transient(code: String)
        /// No answer in time: the message may or may not have been taken.
        case timeout
    }

    public func send(_ message: EmailMessage, logger: Logger) async -> Result {
        // A pooled connection the server closed while idle fails before anything was
        // taken; one more try on a fresh connection then.
        for attempt in 1...2 {
            let connection: SMTPConnection
            do {
                connection = try await checkout()
            } catch let error as SMTPError {
                logger.warning("SMTP connection failed", metadata: ["error": "\(error)"])
                return error == .timeout ? .timeout : .transient(code: Self.code(error))
            } catch {
                logger.warning("SMTP connection failed", metadata: ["error": "\(Self.describe(error))"])
                return .transient(code: "smtp-connect")
            }
            let reused = connection.messagesSent > 0
            do {
                let outcome = try await connection.transaction(from: message.envelopeFrom, to: message.to, message: message.mime())
                checkin(connection)
                switch outcome {
                case .accepted(let reply):
                    return .accepted(reply: reply.lines.last ?? "")
                case .refused(let reply, let stage):
                    logger.warning("SMTP server refused the message", metadata: ["stage": "\(stage)", "code": "\(reply.recordedCode)"])
                    return reply.isTransient ? .transient(code: reply.recordedCode) : .rejected(code: reply.recordedCode)
                }
            } catch let error as SMTPError {
                discard(connection)
                if reused, attempt == 1, error == .closed, !connection.sentMessage { continue }
                return error == .timeout ? .timeout : .transient(code: Self.code(error))
            } catch {
                discard(connection)
                return .transient(code: "smtp-io")
            }
        }
        return .transient(code: "smtp-closed")
    }

    static func code(_ error: SMTPError) -> String {
        switch error {
        case .timeout: "smtp-timeout"
        case .closed: "smtp-closed"
        case .protocolViolation: "smtp-protocol"
        case .unexpected(let reply): reply.recordedCode
        case .tlsUnavailable: "smtp-no-starttls"
        case .repliesBeforeTLS: "smtp-starttls-injection"
        case .authUnavailable: "smtp-no-auth"
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOSSLError { return "tls: \(error)" }
        if let error = error as? ChannelError { return "channel: \(error)" }
        if error is NIOConnectionError { return "cannot connect" }
        return "\(type(of: error))"
    }

    private func checkout() async throws -> SMTPConnection {
        while true {
            while let connection = idle.popLast() {
                let expired = ContinuousClock.now - connection.lastUsed > .seconds(configuration.idleTimeoutSeconds)
                if connection.isActive, !expired, connection.messagesSent < configuration.maxMessagesPerConnection { return connection }
                open -= 1
                Task { await connection.close() }
            }
            if open < configuration.poolSize {
                open += 1
                do {
                    let connection = try await SMTPConnection.open(configuration, tls: tls, group: group)
                    connectionsOpened += 1
                    return connection
                } catch {
                    open -= 1
                    wakeOne()
                    throw error
                }
            }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    private func checkin(_ connection: SMTPConnection) {
        if connection.isActive, connection.messagesSent < configuration.maxMessagesPerConnection {
            idle.append(connection)
        } else {
            open -= 1
            Task { await connection.close() }
        }
        wakeOne()
    }

    private func discard(_ connection: SMTPConnection) {
        open -= 1
        Task { await connection.close() }
        wakeOne()
    }

    private func wakeOne() {
        if !waiters.isEmpty { waiters.removeFirst().resume() }
    }

    /// Closes every idle connection (QUIT).
    public func shutdown() async {
        let all = idle
        idle = []
        open -= all.count
        for connection in all { await connection.close() }
    }
}
