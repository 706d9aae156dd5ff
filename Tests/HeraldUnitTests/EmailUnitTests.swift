import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import NIOCore
import NIOEmbedded
import Testing

/// The pieces of `herald-email` that need no server: addresses, links, templates, MIME,
/// SMTP reply parsing and the `email.*` configuration.
@Suite struct EmailUnitTests {
    static var templatesDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Config/templates/email").path
    }

    /// `email.limits.domain`: a count per recipient domain, but for the large mailbox providers
    /// of `email.limits.domain.exempt`; a bad entry names its key.
    @Test func theDomainLimitCountsPerRecipientDomainButTheLargeProviders() throws {
        let limits = try HeraldConfiguration(every: ConfigSource(values: [:])).email.limits
        #expect(limits.domain == RateLimit(max: 200, windowSeconds: 3600))
        #expect(limits.domainExempt.contains("gmail.com") && limits.domainExempt.contains("outlook.com"))
        let company = limits.rateLimits(email: "ana@acme.io", ip: nil)
        #expect(company.scopes == ["email_address", "email_domain", "global"] && company.keys[1] == "acme.io")
        #expect(!limits.rateLimits(email: "ana@gmail.com", ip: nil).scopes.contains("email_domain"))
        let source = ConfigSource(values: [:], environment: ["HERALD_EMAIL_LIMITS_DOMAIN_MAX": "50", "HERALD_EMAIL_LIMITS_DOMAIN_EXEMPT": "partner.example,acme.io"])
        let configured = try HeraldConfiguration(every: source).email.limits
        #expect(configured.domain.max == 50 && configured.domainExempt == ["partner.example", "acme.io"])
        #expect(!configured.rateLimits(email: "ana@acme.io", ip: nil).scopes.contains("email_domain"))
        #expect(configured.rateLimits(email: "ana@gmail.com", ip: nil).scopes.contains("email_domain"))
        for bad in ["Gmail.com", "a@b.com", "two words"] {
            let error = #expect(throws: ConfigError.self) {
                try HeraldConfiguration(every: ConfigSource(path: nil, environment: ["HERALD_EMAIL_LIMITS_DOMAIN_EXEMPT": bad]))
            }
            #expect(error?.key == "email.limits.domain.exempt", "\(bad)")
        }
    }

    @Test func addressesAreNormalisedOnTheDomainOnly() {
        #expect(EmailAddress.normalize("  Alice@Example.COM ") == "Alice@example.com")
        #expect(EmailAddress.normalize("alice@example.com") != EmailAddress.normalize("ALICE@example.com"))
        #expect(EmailAddress.mailbox("Herald <no-reply@example.com>")?.name == "Herald")
        #expect(EmailAddress.mailbox("Herald <no-reply@example.com>")?.address == "no-reply@example.com")
        #expect(EmailAddress.mailbox("no-reply@example.com")?.name == "")
        #expect(EmailAddress.mailbox("Evil\r\nBcc: x@y.com <a@b.com>") == nil)
        #expect(EmailAddress.mailbox("not an address") == nil)
    }

    @Test func theLinkCarriesOnlyApprovedFields() {
        let approved = EmailLinkPolicy.Approved(continueURL: "https://app.example.com/done?state=a&b=c", continueHost: "app.example.com", linkDomain: "auth.example.com")
        let link = EmailLink.build(approved: approved, path: "/__/auth/action", mode: .signIn, code: Secret("CODE-1_x"), locale: "pt-BR")
        #expect(link.revealed == "https://auth.example.com/__/auth/action?mode=signIn&oobCode=CODE-1_x&continueUrl=https%3A%2F%2Fapp.example.com%2Fdone%3Fstate%3Da%26b%3Dc&lang=pt-BR")
        let components = URLComponents(string: link.revealed)!
        #expect(components.host == "auth.example.com")
        #expect(components.queryItems?.first { $0.name == "continueUrl" }?.value == approved.continueURL)
        #expect("\(link)" == "<redacted>")
    }

    @Test func codesCarryAtLeast128Bits() {
        let code = SecretGenerator.token(bytes: 32)
        #expect(code.revealed.count == 43)
        #expect(Set((0..<100).map { _ in SecretGenerator.token(bytes: 32).revealed }).count == 100)
    }

    @Test func templatesFallBackByLocale() throws {
        let templates = try EmailTemplates.load(directory: Self.templatesDirectory, appName: "Acme & Co")
        let link = Secret("https://auth.example.com/__/auth/action?mode=signIn&oobCode=abc&continueUrl=x")
        let de = templates.render("sign_in", locale: "de-AT", email: "a@b.com", link: link, continueHost: "h", expiresSeconds: 3600)
        #expect(de.locale == "de")
        #expect(de.subject == "Anmeldung bei Acme & Co – Ihr Link")
        #expect(de.text.revealed.contains(link.revealed))
        #expect(de.text.revealed.contains("60 Minuten"))
        // HTML escapes: the & of the link becomes &amp; in the attribute, the app name too.
        #expect(de.html.revealed.contains("oobCode=abc&amp;continueUrl=x"))
        #expect(de.html.revealed.contains("Acme &amp; Co"))
        let fallback = templates.render("reset_password", locale: "de", email: "a@b.com", link: link, continueHost: "h", expiresSeconds: 3600)
        #expect(fallback.locale == "default")
        #expect(fallback.subject == "Reset your password for Acme & Co")
        let none = templates.render(EmailTemplates.noAccount, locale: "xx", email: "a@b.com", link: nil, continueHost: "h", expiresSeconds: 60)
        #expect(none.text.revealed.contains("not registered"))
        #expect(LocaleFallback.chain("pt_BR") == ["pt-br", "pt", "default"])
    }

    @Test func aMissingTemplateIsAConfigurationError() throws {
        let directory = NSTemporaryDirectory() + "herald-email-templates-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "Hi".write(toFile: directory + "/default.sign_in.subject.mustache", atomically: true, encoding: .utf8)
        #expect(throws: ConfigError.self) { try EmailTemplates.load(directory: directory, appName: "x") }
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func theMessageIsMultipartAlternativeWithEncodedHeaders() throws {
        let message = EmailMessage(from: "Hérald Støre <no-reply@example.com>", replyTo: "support@example.com", to: "a@b.com",
                                   subject: "Anmeldung bei Herald – Ihr Link für heute, sehr lang damit es umbricht", text: Secret("Text ü\nlink"),
                                   html: Secret("<p>HTML ü</p>"), requestID: "r1", jobMessageID: "m1", kind: "sign_in")
        let mime = message.mime().revealed
        #expect(mime.contains("\r\nMIME-Version: 1.0\r\n"))
        #expect(mime.contains("Content-Type: multipart/alternative; boundary="))
        #expect(mime.contains("Content-Type: text/plain; charset=utf-8"))
        #expect(mime.contains("Content-Type: text/html; charset=utf-8"))
        #expect(mime.contains("Reply-To: support@example.com"))
        #expect(mime.contains("Subject: =?UTF-8?B?"))
        #expect(mime.contains("From: =?UTF-8?B?"))
        #expect(mime.contains("Message-ID: <"))
        #expect(message.messageID.hasSuffix("@example.com>"))
        #expect(mime.contains("Date: "))
        #expect(EmailMessage.rfc5322Date(Date(timeIntervalSince1970: 1_795_000_000)) == "Wed, 18 Nov 2026 11:06:40 +0000")
        #expect(!mime.split(separator: "\r\n", omittingEmptySubsequences: false).contains { $0.utf8.count > 998 })
        // Every subject word decodes back to the subject.
        let words = mime.components(separatedBy: "\r\n").drop { !$0.hasPrefix("Subject: ") }.prefix { $0.hasPrefix("Subject: ") || $0.hasPrefix(" ") }
        let decoded = words.map { line -> String in
            let word = line.replacingOccurrences(of: "Subject: ", with: "").trimmingCharacters(in: .whitespaces)
            let b64 = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            return String(decoding: Data(base64Encoded: String(b64))!, as: UTF8.self)
        }.joined()
        #expect(decoded == message.subject)
        #expect(EmailMessage.encodeHeader("Plain subject") == "Plain subject")
        #expect(!EmailMessage.encodeHeader("a\r\nBcc: x@y.com").contains("\r\nBcc"))
    }

    @Test func dotStuffing() {
        #expect(SMTPConnection.dotStuffed(".a\r\n.b\r\nc") == "..a\r\n..b\r\nc\r\n")
        // Only a dot that starts a line (after CRLF) is doubled; a bare LF starts none.
        #expect(SMTPConnection.dotStuffed("a.b\r\n..c\r\nx\n.y\r\n") == "a.b\r\n...c\r\nx\n.y\r\n")
        #expect(SMTPConnection.dotStuffed("\r\n.\r\n") == "\r\n..\r\n", "a lone dot line never ends the data")
        #expect(SMTPConnection.dotStuffed("") == "\r\n")
        #expect(SMTPConnection.dotStuffed(".") == "..\r\n")
        #expect(SMTPConnection.dotStuffed("é\r\n.ü") == "é\r\n..ü\r\n")
    }

    @Test func aDisplayNameIsQuotedWithItsQuotesAndBackslashesEscaped() {
        #expect(EmailMessage.encodeMailbox("Acme <no-reply@example.com>") == "\"Acme\" <no-reply@example.com>")
        #expect(EmailMessage.encodeMailbox(#"Acme "Auth" \ Co <a@example.com>"#) == #""Acme \"Auth\" \\ Co" <a@example.com>"#)
        #expect(EmailMessage.encodeMailbox("a@example.com") == "a@example.com")
    }

    @Test func smtpRepliesAreDecodedAcrossLines() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(SMTPReplyDecoder()))
        try channel.writeInbound(channel.allocator.buffer(string: "250-localhost\r\n250-PIPELINING\r\n250 AUTH PLAIN LOGIN\r\n550 5.1.1 No such"))
        try channel.writeInbound(channel.allocator.buffer(string: " user\r\n"))
        let first = try #require(try channel.readInbound(as: SMTPReply.self))
        #expect(first.code == 250)
        #expect(first.lines == ["localhost", "PIPELINING", "AUTH PLAIN LOGIN"])
        let second = try #require(try channel.readInbound(as: SMTPReply.self))
        #expect(second.code == 550)
        #expect(second.recordedCode == "smtp-550-5.1.1")
        #expect(SMTPReply(code: 421, lines: ["Bye alice@example.com"]).recordedCode == "smtp-421")
        #expect(throws: (any Error).self) { try channel.writeInbound(channel.allocator.buffer(string: "hello\r\n")) }
    }

    @Test func outboxMasksTheCode() {
        #expect(OutboxEmailProvider.masked("open https://x/?mode=signIn&oobCode=abcDEF_-123&continueUrl=y now") ==
            "open https://x/?mode=signIn&oobCode=********&continueUrl=y now")
    }

    @Test func configurationIsValidated() throws {
        let email = try HeraldConfiguration(every: ConfigSource(values: [
            "email.authorized_domains": ["app.example.com", "*.example.org"], "email.link_domains": ["auth.example.com"],
            "email.default_link_domain": "auth.example.com", "email.expiry_seconds.sign_in": 600,
            "email.providers": ["smtp", "outbox"], "email.smtp.username": "u", "email.smtp.password": "p",
        ])).email
        #expect(email.expiry(.signIn) == 600)
        #expect(email.expiry(.resetPassword) == 3600)
        #expect(email.providers == [.smtp, .outbox])
        #expect(email.effectiveValues["email.smtp.password"] as? String == "***")
        for bad: [String: Any] in [
            ["email.default_link_domain": "other.com"],
            ["email.authorized_domains": ["*.com/x"]],
            ["email.providers": ["carrier-pigeon"]],
            ["email.providers": ["http_mail"]],
            ["email.smtp.tls": "sometimes"],
            ["email.sender": "Evil\nBcc: x@y.com"],
            ["email.unknown_address": "maybe"],
            ["email.smtp.username": "u", "email.smtp.tls": "none", "email.smtp.host": "mail.example.com", "email.smtp.password": "p", "email.providers": ["smtp"]],
        ] {
            #expect(throws: ConfigError.self, "\(bad)") { try HeraldConfiguration(every: ConfigSource(values: bad)) }
        }
    }
}
