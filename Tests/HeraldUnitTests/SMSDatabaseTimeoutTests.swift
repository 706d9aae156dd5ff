import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `herald-sms`'s grouped database steps (``PhoneGroups``, the fraud guard's batcher) give up
/// after `database.operation_timeout_seconds`, as every other database step of a worker does,
/// not after a fixed 15 s. Against a socket that takes connections and never answers (a
/// database gone silent), so no server is needed.
@Suite struct SMSDatabaseTimeoutTests {
    /// A listening socket on loopback that never accepts: connections complete in the kernel's
    /// backlog, and nothing ever answers them.
    final class SilentServer: Sendable {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    static func handler(operationTimeoutSeconds: Int) throws -> PhoneHandler {
        var configuration = HeraldConfiguration()
        configuration.database.operationTimeoutSeconds = operationTimeoutSeconds
        configuration.secrets.hmacKeys = "k1:" + Data(repeating: 7, count: 32).base64EncodedString()
        configuration.sms.templatesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Config/templates/sms").path
        configuration.sms.fraudGuard.enabled = true
        return try PhoneHandler(configuration: configuration)
    }

    /// Runs `body` with a client of the silent server: the error it threw, if any.
    static func timed(_ body: @escaping @Sendable (PostgresClient, Logger) async throws -> Void) async throws -> (any Error)? {
        let server = try SilentServer()
        let client = PostgresClient(configuration: .init(host: "127.0.0.1", port: server.port, username: "herald", password: nil, database: "herald", tls: .disable))
        let run = Task { await client.run() }
        defer { run.cancel() }
        do {
            try await body(client, Logger(label: "test.sms-timeout"))
            return nil
        } catch {
            return error
        }
    }

    @Test(.timeLimit(.minutes(1))) func theGroupedStepsGiveUpAfterTheConfiguredTimeout() async throws {
        let handler = try Self.handler(operationTimeoutSeconds: 1)
        let started = ContinuousClock.now
        let error = try await Self.timed { client, logger in
            try await handler.groups.sent(PhoneStore.Sent(verificationID: "v-timeout", attempts: [], encoding: SMSEncoding("123456")), client: client, logger: logger)
        }
        let waited = ContinuousClock.now - started
        #expect(error is DeadlineExceeded, "\(String(describing: error))")
        #expect(waited < .seconds(5), "PhoneGroups waited \(waited), not database.operation_timeout_seconds (1 s)")
    }

    @Test(.timeLimit(.minutes(1))) func theFraudGuardGivesUpAfterTheConfiguredTimeout() async throws {
        let handler = try Self.handler(operationTimeoutSeconds: 1)
        let started = ContinuousClock.now
        let error = try await Self.timed { client, logger in
            _ = try await handler.fraudGuard.check(verificationID: "v-timeout", phone: "+33612345678", region: "FR", knownHashes: "", proven: false, client: client, logger: logger)
        }
        let waited = ContinuousClock.now - started
        #expect(error is DeadlineExceeded, "\(String(describing: error))")
        #expect(waited < .seconds(5), "the fraud guard waited \(waited), not database.operation_timeout_seconds (1 s)")
    }
}
