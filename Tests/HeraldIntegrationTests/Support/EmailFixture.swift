import AMQP
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldEmailCheck
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Logging
import PostgresNIO

/// `herald-email` in-process on a test's namespace, delivering to the real SMTP server
/// `make test` starts (scripts/smtp-server.py: its maildir is the mailbox the test reads),
/// with the events it emits and the consume API.
final class EmailFixture: Sendable {
    let harness: Harness
    /// The channel's events, as a front API's consumer reads them.
    let events: EventTap
    let spool: String

    static let env = ProcessInfo.processInfo.environment
    static var smtpHost: String { env["HERALD_DEV_SMTP_HOST"] ?? "127.0.0.1" }
    static var smtpPort: Int { Int(env["HERALD_DEV_SMTP_PORT"] ?? "") ?? 55692 }
    static var smtpTLSPort: Int { Int(env["HERALD_DEV_SMTP_TLS_PORT"] ?? "") ?? smtpPort + 1 }
    static var runDir: URL { TestEnvironment.root.appendingPathComponent(".run") }
    static var smtpCA: String { env["HERALD_DEV_SMTP_CA"] ?? runDir.appendingPathComponent("smtp/tls/server.pem").path }
    static var smtpPasswordFile: String { env["HERALD_DEV_SMTP_PASSWORD_FILE"] ?? runDir.appendingPathComponent("smtp/password").path }
    static var smtpPassword: String {
        ((try? String(contentsOfFile: smtpPasswordFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
    static var maildir: String { env["HERALD_DEV_SMTP_MAILDIR"] ?? runDir.appendingPathComponent("smtp/maildir").path }
    static var templatesDirectory: String { TestEnvironment.root.appendingPathComponent("Config/templates/email").path }

    init(_ harness: Harness) async throws {
        self.harness = harness
        spool = NSTemporaryDirectory() + "herald-email-\(harness.namespace)"
        events = try await EventTap(harness, channel: "email")
        harness.onClose { await self.close() }
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
        // Every suite writes to example.net, side by side, within the hour: the per-domain limit
        // (200 an hour by default) would join them. EmailLimitTests' domain test sets its own.
        email.limits.domain = RateLimit(max: 100_000_000, windowSeconds: 3600)
        // The same for the per-IP limit: requests through herald-api all come from 127.0.0.1.
        // EmailLimitTests' IP test sets its own.
        email.limits.ip = RateLimit(max: 100_000_000, windowSeconds: 3600)
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

    /// verify_and_change_email jobs carry `old_email` (`old-…-n@example.net` unless given).
    func job(_ n: Int, mode: EmailActionJob.Mode = .signIn, to email: String? = nil, url: String = "https://app.example.com/finish?state=s\(Int.random(in: 0..<1000))",
             locale: String? = "en", linkDomain: String? = nil, oldEmail: String? = nil) -> EmailActionJob {
        var settings = EmailActionJob.ActionCodeSettings(url: url, handleCodeInApp: true, iosBundleID: "com.example.ios",
                                                         androidPackageName: "com.example.android", androidInstallApp: true,
                                                         androidMinimumVersion: "12", linkDomain: linkDomain)
        settings.dynamicLinkDomain = nil
        return EmailActionJob(requestID: "\(harness.namespace)-r\(n)", email: email ?? address(n), mode: mode,
                              oldEmail: mode == .verifyAndChangeEmail ? oldEmail ?? address(n, behaviour: "old") : nil,
                              locale: locale, actionCodeSettings: settings)
    }

    typealias Received = MaildirMessage

    /// Every message the SMTP server stored for `to` (the envelope recipient), oldest first.
    func received(to: String) -> [Received] {
        Self.rawMessages(to: to).compactMap(MaildirMessage.parse)
    }

    /// The stored messages for `to` as the server wrote them, oldest first.
    static func rawMessages(to: String) -> [String] {
        MaildirMessage.files(in: maildir).compactMap { path in
            guard let raw = try? String(contentsOfFile: path, encoding: .utf8), MaildirMessage.envelopeRecipient(raw) == to else { return nil }
            return raw
        }
    }

    func consume(_ email: String, _ code: String, mode: EmailActionJob.Mode = .signIn) async throws -> EmailLinkVerifier.Result {
        let verification = try HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
        return mode == .signIn
            ? try await verification.consumeEmailLink(email: email, oobCode: code, logger: harness.logger)
            : try await verification.consumeEmailAction(mode, email: email, oobCode: code, logger: harness.logger)
    }



    /// (state, reason, provider, uncertain sends) of a request.
    func request(_ id: String) async throws -> (String, String?, String?, Int)? {
        let rows = try await harness.database.query("""
            SELECT state, reason, provider, uncertain_sends FROM herald.email_requests WHERE request_id = \(id)
            """, logger: harness.logger)
        for try await row in rows.decode((String, String?, String?, Int).self) { return row }
        return nil
    }

    /// Gives `email` an account with a password (so reset_password and verify_email send).
    func createAccount(for email: String) async throws {
        let accounts = AccountStore(client: harness.database, logger: harness.logger)
        _ = try await accounts.createAccount(id: "\(harness.namespace)-\(email)", provider: "password", providerUID: email)
    }

    /// The request ids of the requests of `mode` to `email` (normal form).
    func requestIDs(to email: String, mode: String) async throws -> [String] {
        let rows = try await harness.database.query("""
            SELECT request_id FROM herald.email_requests WHERE email = \(email) AND mode = \(mode) ORDER BY created_at
            """, logger: harness.logger)
        var out: [String] = []
        for try await id in rows.decode(String.self) { out.append(id) }
        return out
    }

    /// Outbox rows of this namespace's events exchange named `name` for `requestID` (not yet relayed).
    func outboxEvents(named name: String, requestID: String) async throws -> Int {
        let rows = try await harness.database.query("""
            SELECT count(*)::int FROM herald.event_outbox
             WHERE exchange = \(harness.topology.eventsExchange) AND name = \(name) AND body::jsonb ->> 'request_id' = \(requestID)
            """, logger: harness.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Statuses of a request's codes, oldest first.
    func codes(_ requestID: String) async throws -> [String] {
        let rows = try await harness.database.query("SELECT status FROM herald.email_codes WHERE request_id = \(requestID) ORDER BY id", logger: harness.logger)
        var out: [String] = []
        for try await status in rows.decode(String.self) { out.append(status) }
        return out
    }

    func close() async {
        try? FileManager.default.removeItem(atPath: spool)
        // Jobs this namespace's consumes enqueued that no worker of it relayed (the exchange goes).
        _ = try? await harness.database.query("""
            DELETE FROM herald.event_outbox WHERE exchange IN (\(harness.topology.jobsExchange), \(harness.topology.eventsExchange))
            """, logger: harness.logger)
    }
}

