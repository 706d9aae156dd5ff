import AMQP
import Foundation
import HeraldClient
import Logging
import PostgresNIO
@testable import HeraldCore

/// `herald-email` in-process on a test's namespace, delivering to the real SMTP server
/// `make test` starts (scripts/smtp-server.py: its maildir is the mailbox the test reads),
/// with the events it emits and the consume API.
final class EmailFixture: Sendable {
    let harness: Harness
    let eventsQueue: String
    let spool: String

    static let env = ProcessInfo.processInfo.environment
    static var smtpHost: String { env["HERALD_SMTP_HOST"] ?? "127.0.0.1" }
    static var smtpPort: Int { Int(env["HERALD_SMTP_PORT"] ?? "") ?? 55692 }
    static var smtpTLSPort: Int { Int(env["HERALD_SMTP_TLS_PORT"] ?? "") ?? smtpPort + 1 }
    static var runDir: URL { TestEnvironment.root.appendingPathComponent(".run") }
    static var smtpCA: String { env["HERALD_SMTP_CA"] ?? runDir.appendingPathComponent("smtp/tls/server.pem").path }
    static var smtpPasswordFile: String { env["HERALD_SMTP_PASSWORD_FILE"] ?? runDir.appendingPathComponent("smtp/password").path }
    static var smtpPassword: String {
        ((try? String(contentsOfFile: smtpPasswordFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
    static var maildir: String { env["HERALD_SMTP_MAILDIR"] ?? runDir.appendingPathComponent("smtp/maildir").path }
    static var templatesDirectory: String { TestEnvironment.root.appendingPathComponent("Config/templates/email").path }

    init(_ harness: Harness) async throws {
        self.harness = harness
        eventsQueue = "\(harness.namespace).test-email-events"
        spool = NSTemporaryDirectory() + "herald-email-\(harness.namespace)"
        try await harness.connection.declare(.init(
            queues: [.init(name: eventsQueue, durable: false, autoDelete: false)],
            bindings: [.init(queue: eventsQueue, exchange: harness.topology.eventsExchange, routingKey: "email.#")]))
    }

    /// SMTP with STARTTLS and AUTH against the test server; authorized domains
    /// app.example.com and *.example.org; link domains auth.example.com (default) and links.example.com.
    static func emailConfiguration(tls: EmailConfiguration.SMTP.TLSMode = .starttls, auth: Bool = true) -> EmailConfiguration {
        var email = EmailConfiguration()
        email.sender = "Herald Tests <no-reply@herald.test>"
        email.replyTo = "support@herald.test"
        email.authorizedDomains = ["app.example.com", "*.example.org"]
        email.linkDomains = ["auth.example.com", "links.example.com"]
        email.defaultLinkDomain = "auth.example.com"
        email.templatesDirectory = templatesDirectory
        email.providers = [.smtp]
        email.providerTimeoutMilliseconds = 10_000
        email.smtp.host = tls == .implicit ? "localhost" : smtpHost
        email.smtp.port = tls == .implicit ? smtpTLSPort : smtpPort
        email.smtp.tls = tls
        email.smtp.caFile = smtpCA
        email.smtp.verifyCertificate = true
        email.smtp.commandTimeoutMilliseconds = 5_000
        email.smtp.poolSize = 2
        if auth {
            email.smtp.username = "herald"
            email.smtp.password = smtpPassword
        }
        return email
    }

    func configuration(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) -> HeraldConfiguration {
        var configuration = harness.configuration
        configuration.email = Self.emailConfiguration()
        configuration.outbox.directory = spool
        configure(&configuration)
        return configuration
    }

    func start(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> RunningWorker {
        let configuration = configuration(configure)
        let handler = try EmailHandler(configuration: configuration)
        return try await harness.startRunner(.email, handler) { $0 = configuration }
    }

    /// A unique address of this test; `behaviour` is a local-part prefix the SMTP server acts on.
    func address(_ n: Int, behaviour: String = "user", domain: String = "example.net") -> String {
        "\(behaviour)-\(harness.namespace)-\(n)@\(domain)"
    }

    func job(_ n: Int, mode: EmailActionJob.Mode = .signIn, to email: String? = nil, url: String = "https://app.example.com/finish?state=s\(Int.random(in: 0..<1000))",
             locale: String? = "en", linkDomain: String? = nil) -> EmailActionJob {
        var settings = EmailActionJob.ActionCodeSettings(url: url, handleCodeInApp: true, iosBundleID: "com.example.ios",
                                                         androidPackageName: "com.example.android", androidInstallApp: true,
                                                         androidMinimumVersion: "12", linkDomain: linkDomain)
        settings.dynamicLinkDomain = nil
        return EmailActionJob(requestID: "\(harness.namespace)-r\(n)", email: email ?? address(n), mode: mode, locale: locale, actionCodeSettings: settings)
    }

    /// A message as the SMTP server stored it.
    struct Received: Sendable {
        var envelopeTo: String
        var headers: [(String, String)]
        var text: String
        var html: String
        var contentType: String

        func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

        /// The subject with RFC 2047 words decoded.
        var subject: String { Received.decodeWords(header("Subject") ?? "") }

        /// The first https link of the plain text.
        var link: URLComponents? {
            guard let start = text.range(of: "https://") else { return nil }
            let url = text[start.lowerBound...].prefix { !$0.isWhitespace }
            return URLComponents(string: String(url))
        }

        func query(_ name: String) -> String? { link?.queryItems?.first { $0.name == name }?.value }

        static func decodeWords(_ value: String) -> String {
            var out = ""
            for word in value.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
                if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) {
                    out += String(decoding: data, as: UTF8.self)
                } else {
                    out += (out.isEmpty ? "" : " ") + word
                }
            }
            return out
        }
    }

    /// Every message the SMTP server stored for `to` (the envelope recipient), oldest first.
    func received(to: String) -> [Received] {
        let directory = Self.maildir + "/new"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var out: [Received] = []
        for name in names {
            guard let raw = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8),
                  raw.hasPrefix("X-Herald-Envelope-To: \(to)\n") || raw.hasPrefix("X-Herald-Envelope-To: \(to)\r\n")
            else { continue }
            if let message = Self.parse(raw) { out.append(message) }
        }
        return out
    }

    static func parse(_ raw: String) -> Received? {
        let text = raw.replacingOccurrences(of: "\r\n", with: "\n")
        guard let split = text.range(of: "\n\n") else { return nil }
        var headers: [(String, String)] = []
        for line in text[..<split.lowerBound].split(separator: "\n") {
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].1 += " " + line.trimmingCharacters(in: .whitespaces)
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        let contentType = headers.first { $0.0.lowercased() == "content-type" }?.1 ?? ""
        guard let boundaryRange = contentType.range(of: "boundary=\"") else { return nil }
        let boundary = contentType[boundaryRange.upperBound...].prefix { $0 != "\"" }
        var plain = "", html = ""
        for part in text[split.upperBound...].components(separatedBy: "--\(boundary)") {
            guard let partSplit = part.range(of: "\n\n") else { continue }
            let partHeaders = part[..<partSplit.lowerBound].lowercased()
            let body = part[partSplit.upperBound...].split(separator: "\n").joined()
            guard partHeaders.contains("base64"), let data = Data(base64Encoded: body) else { continue }
            let decoded = String(decoding: data, as: UTF8.self)
            if partHeaders.contains("text/plain") { plain = decoded }
            if partHeaders.contains("text/html") { html = decoded }
        }
        let to = headers.first?.1 ?? ""
        return Received(envelopeTo: to, headers: headers, text: plain, html: html, contentType: contentType)
    }

    func consume(_ email: String, _ code: String, mode: EmailActionJob.Mode = .signIn) async throws -> EmailLinkVerifier.Result {
        let verification = try HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
        return mode == .signIn
            ? try await verification.consumeEmailLink(email: email, oobCode: code, logger: harness.logger)
            : try await verification.consumeEmailAction(mode, email: email, oobCode: code, logger: harness.logger)
    }

    /// Events emitted so far: (routing key, JSON object).
    func events() async throws -> [(String, [String: Any])] {
        var out: [(String, [String: Any])] = []
        while let delivery = try await harness.connection.get(queue: eventsQueue) {
            let object = (try? JSONSerialization.jsonObject(with: Data(delivery.body))) as? [String: Any] ?? [:]
            out.append((delivery.routingKey, object))
            try await delivery.ack()
        }
        return out
    }

    /// Events, waiting until at least `count` have arrived (the relay publishes them after
    /// the outcome commits, so they can trail the ledger).
    func events(atLeast count: Int) async throws -> [(String, [String: Any])] {
        let collected = EventBox()
        try? await eventually(timeout: .seconds(10), "\(count) events") {
            collected.append(try await self.events())
            return collected.count >= count
        }
        return collected.all
    }

    /// (state, reason, provider, uncertain sends) of a request.
    func request(_ id: String) async throws -> (String, String?, String?, Int)? {
        let rows = try await harness.database.query("""
            SELECT state, reason, provider, uncertain_sends FROM herald.email_requests WHERE request_id = \(id)
            """, logger: harness.logger)
        for try await row in rows.decode((String, String?, String?, Int).self) { return row }
        return nil
    }

    /// Statuses of a request's codes, oldest first.
    func codes(_ requestID: String) async throws -> [String] {
        let rows = try await harness.database.query("SELECT status FROM herald.email_codes WHERE request_id = \(requestID) ORDER BY id", logger: harness.logger)
        var out: [String] = []
        for try await status in rows.decode(String.self) { out.append(status) }
        return out
    }

    func close() async {
        try? await harness.connection.deleteQueue(eventsQueue)
        try? FileManager.default.removeItem(atPath: spool)
    }
}

/// Events collected across polls.
final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [(String, [String: Any])] = []
    func append(_ more: [(String, [String: Any])]) { lock.withLock { events += more } }
    var count: Int { lock.withLock { events.count } }
    var all: [(String, [String: Any])] { lock.withLock { events } }
}
