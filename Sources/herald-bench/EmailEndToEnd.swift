import Foundation
import HeraldEmail
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging

/// `herald-email` end to end: HeraldClient publishes `email.action` sign-in jobs, each to its
/// own address; in-process workers assembled as the executable assembles them
/// (`EmailWorker.handler`, `WorkerServices`) decide each in PostgreSQL
/// (`herald.email_prepare`: code hashed and stored, the three send limits counted), render
/// the message and send it over SMTP with STARTTLS and AUTH, as the dev setup runs it, to
/// the local SMTP server (`scripts/smtp-server.py`, HERALD_DEV_SMTP_* of
/// `scripts/services.sh env`); `sent` is recorded, the outcome commits with `email.sent`,
/// the job is acked. The watch stops when the outcome commits.
///
/// The server stores each message in its maildir; the run fails unless every job's address
/// received its message there (the run's files are removed afterwards).
struct EmailEndToEnd {
    var count: Int
    var configuration: HeraldConfiguration
    var logger: Logger

    /// The local SMTP server of `scripts/services.sh` (STARTTLS, AUTH, its CA).
    struct Server {
        var host: String
        var port: Int
        var caFile: String
        var username: String
        var password: String
        var maildir: String

        static func fromEnvironment() throws -> Server {
            let env = ProcessInfo.processInfo.environment
            func required(_ name: String) throws -> String {
                guard let value = env[name], !value.isEmpty else { throw BenchFailure("\(name) is not set (eval \"$(scripts/services.sh env)\")") }
                return value
            }
            guard let port = Int(try required("HERALD_DEV_SMTP_PORT")) else { throw BenchFailure("HERALD_DEV_SMTP_PORT is not a port") }
            let passwordFile = try required("HERALD_DEV_SMTP_PASSWORD_FILE")
            guard let password = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw BenchFailure("cannot read HERALD_DEV_SMTP_PASSWORD_FILE (\(passwordFile))")
            }
            return Server(host: try required("HERALD_DEV_SMTP_HOST"), port: port, caFile: try required("HERALD_DEV_SMTP_CA"),
                          username: try required("HERALD_DEV_SMTP_USERNAME"), password: password.trimmingCharacters(in: .whitespacesAndNewlines),
                          maildir: try required("HERALD_DEV_SMTP_MAILDIR"))
        }
    }

    /// The broker baseline, then 1 and 2 workers; printed with `clientBaseline` (the SMTP
    /// client alone, from ``emailBenchmarks``) as a second ratio.
    func run(clientBaseline: BenchResult?) async throws {
        let server = try Server.fromEnvironment()
        var rows = [try await brokerBaseline(count: count, configuration: configuration, logger: logger)]
        for workers in [1, 2] {
            rows.append(try await endToEnd(workers: workers, server: server))
        }
        print("\nherald-bench email end to end: \(count) email.action jobs each (sign_in, an address each), STARTTLS+AUTH to the local SMTP server, "
              + "pool_size \(configuration.email.smtp.poolSize) per worker, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        printEndToEnd(rows, client: clientBaseline.map { ("vs SMTP client", $0) })
    }

    /// `workers` in-process herald-email workers; fails unless the SMTP server stored one
    /// message for each job's address.
    func endToEnd(workers: Int, server: Server) async throws -> BenchResult {
        var configuration = self.configuration
        var email = configuration.email
        email.providers = [.smtp]
        email.smtp.host = server.host
        email.smtp.port = server.port
        email.smtp.tls = .starttls
        email.smtp.caFile = server.caFile
        email.smtp.verifyCertificate = true
        email.smtp.username = server.username
        email.smtp.password = server.password
        email.authorizedDomains = ["app.example.com"]
        email.linkDomains = ["auth.example.com"]
        email.defaultLinkDomain = "auth.example.com"
        // The send limits are counted on every job but are not what is measured: none refuses.
        let unlimited = RateLimit(max: 100_000_000, windowSeconds: 3600)
        email.limits.address = unlimited
        email.limits.ip = unlimited
        email.limits.domain = unlimited
        email.limits.global = unlimited
        configuration.email = email

        // A prefix of this run: its messages are told from the tests' and other runs' in the maildir.
        let prefix = "e2e-\(UUID().uuidString.prefix(8).lowercased())-"
        let counter = Counter()
        let settings = EmailActionJob.ActionCodeSettings(url: "https://app.example.com/finish", handleCodeInApp: true)
        let result = try await workersEndToEnd(
            count: count, workers: workers, configuration: configuration, logger: logger,
            name: "herald-email, \(workers) worker\(workers == 1 ? "" : "s") (SMTP)",
            makeHandler: { TimedHandler(inner: try EmailWorker.handler(configuration: configuration), watch: $0) },
            job: { id in
                EmailActionJob(requestID: id, email: "\(prefix)\(counter.next())@example.net", mode: .signIn, locale: "en", actionCodeSettings: settings)
            })
        let (received, files) = Self.received(prefix: prefix, maildir: server.maildir)
        for file in files { try? FileManager.default.removeItem(atPath: file) }
        guard received.count >= count else {
            throw BenchFailure("the SMTP server stored messages for \(received.count) of \(count) addresses")
        }
        if files.count > received.count { print("herald-bench email: \(files.count - received.count) messages sent twice") }
        return result
    }

    /// The distinct recipients starting with `prefix` of the messages in the maildir, and their files.
    static func received(prefix: String, maildir: String) -> (Set<String>, [String]) {
        var recipients = Set<String>()
        var files: [String] = []
        for path in MaildirMessage.files(in: maildir) {
            guard let raw = try? String(contentsOfFile: path, encoding: .utf8),
                  let recipient = MaildirMessage.envelopeRecipient(raw)?.lowercased(), recipient.hasPrefix(prefix) else { continue }
            recipients.insert(recipient)
            files.append(path)
        }
        return (recipients, files)
    }
}

/// The table of an end-to-end part: msg/s, latency, the ratio to the broker baseline of the
/// same invocation (the first row) and to `client` (the provider client alone) when given, and
/// the CPU per job of each component (``CPUMeter``: broker · PostgreSQL · worker processes ·
/// herald-bench, whose in-process workers are in the last) with the cores they kept busy.
func printEndToEnd(_ rows: [BenchResult], client: (String, BenchResult)?) {
    guard let broker = rows.first else { return }
    print(pad("run", 40) + pad("msg/s", 8) + pad("p50 ms", 9) + pad("p99 ms", 9) + pad("vs base", 9)
          + (client.map { pad($0.0, 16) } ?? "") + pad("CPU ms/job broker·pg·worker·bench", 35) + "cores")
    for row in rows {
        let cpu = row.cpu.map { pad($0.perJobCell(row.count), 35) + String(format: "%.2f", $0.total / max($0.wall, 0.001)) } ?? ""
        print(pad(row.name, 40) + pad(String(format: "%.0f", row.rate), 8) + pad(String(format: "%.1f", row.p50), 9)
              + pad(String(format: "%.1f", row.p99), 9) + pad(String(format: "%.2f", row.rate / max(broker.rate, 1)), 9)
              + (client.map { pad(String(format: "%.2f", row.rate / max($0.1.rate, 1)), 16) } ?? "") + cpu)
    }
    if let client { print("(\(client.0): \(client.1.name), \(String(format: "%.0f", client.1.rate)) msg/s in this invocation)") }
}
