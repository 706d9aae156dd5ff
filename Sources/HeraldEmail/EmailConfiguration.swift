import Foundation
import HeraldRuntime
import HeraldWire

/// `email.*`: link safety, one-time codes, templates, enumeration protection and the
/// delivery providers of `herald-email`.
public struct EmailConfiguration: ConfigurationSection {
    public static let key = "email"

    public enum ProviderKind: String, Sendable, CaseIterable { case smtp, httpMail = "http_mail", outbox }

    /// What a job for an address with no account does (reset_password, verify_email).
    public enum UnknownAddress: String, Sendable, CaseIterable {
        /// Send nothing (the default; Firebase's behaviour with enumeration protection).
        case silent
        /// Send the `no_account` note: "someone asked to reset a password for this address…".
        case notify
    }

    public struct SMTP: Sendable {
        public enum TLSMode: String, Sendable, CaseIterable {
            /// Plain connection, then STARTTLS (required: no plain-text fallback).
            case starttls
            /// TLS from the first byte (port 465, "SMTPS").
            case implicit
            /// No TLS at all: only for a relay on loopback.
            case none
        }
        public var host = "127.0.0.1"
        public var port = 587
        public var tls: TLSMode = .starttls
        /// PEM file of the CA that signs the server's certificate; empty: the system's roots.
        public var caFile = ""
        /// Check the certificate and host name (turn off only for a dev server with a self-signed certificate).
        public var verifyCertificate = true
        public var username = ""
        public var password = ""
        /// Name sent in EHLO.
        public var heloName = "localhost"
        public var connectTimeoutMilliseconds = 10_000
        /// Per command (the whole DATA transfer included).
        public var commandTimeoutMilliseconds = 30_000
        /// Connections kept open and reused across messages.
        public var poolSize = 4
        /// A connection idle longer than this is closed.
        public var idleTimeoutSeconds = 60
        /// Messages sent on one connection before it is renewed.
        public var maxMessagesPerConnection = 1000

        public init() {}
    }

    /// `email.apple_relay.*`: mail to Apple's private relay (`…@privaterelay.appleid.com`).
    public struct AppleRelay: Sendable {
        /// The `From` of mail to a relay address: an address (or name and address) registered
        /// with Apple (Sign in with Apple for Email Communication), since Apple's relay drops
        /// mail from unregistered senders. Empty: ``EmailConfiguration/sender`` (then that one
        /// must be registered).
        public var sender = ""

        public init() {}
    }

    public struct HTTPMail: Sendable {
        /// The endpoint a JSON message is POSTed to (with `Authorization: Bearer`).
        public var url = ""
        public var token = ""

        public init() {}
    }

    /// The sender (`From`). Mail to Apple's private relay (`@privaterelay.appleid.com`) goes
    /// from ``AppleRelay/sender`` when set, from this one otherwise (then it must be registered
    /// with Apple for the relay to forward it).
    public var sender = "Herald <no-reply@herald.localhost>"
    /// `Reply-To`; empty: none.
    public var replyTo = ""
    /// `{{app_name}}` in the templates.
    public var appName = "Herald"
    /// Hosts a continue URL may point at: `example.com` (that host only) or `*.example.com`
    /// (its subdomains, not the domain itself).
    public var authorizedDomains: [String] = ["localhost"]
    /// Hosts the link itself may be built on (`link_domain`).
    public var linkDomains: [String] = ["localhost"]
    /// The link domain when a job names none (Firebase: PROJECT_ID.firebaseapp.com).
    public var defaultLinkDomain = "localhost"
    /// Path of the action handler on the link domain.
    public var linkPath = "/__/auth/action"
    /// Seconds a code stays valid, per mode.
    public var expirySeconds: [EmailActionJob.Mode: Int] = [
        .signIn: 3600, .verifyEmail: 259_200, .resetPassword: 3600, .verifyAndChangeEmail: 259_200, .recoverEmail: 259_200,
    ]
    public var unknownAddress: UnknownAddress = .silent
    /// `email.limits.*`: send limits per address, client IP and in all (EmailConfiguration+Limits.swift).
    public var limits = Limits()
    /// `email.code.*`: the one-time codes of `email.code` jobs (EmailConfiguration+Code.swift).
    public var code = Code()
    /// Absolute once read from a ``ConfigSource`` (see ``ConfigSource/path(_:default:)``).
    public var templatesDirectory = "Config/templates/email"
    /// Tried in this order; the next on a transient error or timeout.
    public var providers: [ProviderKind] = [.outbox]
    public var providerTimeoutMilliseconds = 30_000
    public var smtp = SMTP()
    public var httpMail = HTTPMail()
    public var appleRelay = AppleRelay()
    /// Lets the providers in use reach a host other than loopback in clear (SMTP with
    /// `tls: none`, an `http://` HTTP mail URL): off, such a configuration does not start.
    public var allowInsecureTransport = false

    public init() {}

    public func expiry(_ mode: EmailActionJob.Mode) -> Int { expirySeconds[mode] ?? 3600 }

    /// The `From` of a message to `address`: `email.apple_relay.sender` (or `email.sender`)
    /// for an address of Apple's private relay, `email.sender` otherwise.
    public func sender(to address: String) -> String {
        PrivateRelayAddresses.isRelay(address) && !appleRelay.sender.isEmpty ? appleRelay.sender : sender
    }

    /// Every `email.*` key with its effective value, secrets masked (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        func mask(_ value: String) -> String { value.isEmpty ? "" : "***" }
        var values: [String: Any] = [
            "email.sender": sender, "email.reply_to": replyTo, "email.app_name": appName,
            "email.authorized_domains": authorizedDomains, "email.link_domains": linkDomains,
            "email.default_link_domain": defaultLinkDomain, "email.link_path": linkPath,
            "email.unknown_address": unknownAddress.rawValue, "email.templates_dir": templatesDirectory,
            "email.providers": providers.map(\.rawValue), "email.provider_timeout_ms": providerTimeoutMilliseconds,
            "email.smtp.host": smtp.host, "email.smtp.port": smtp.port, "email.smtp.tls": smtp.tls.rawValue,
            "email.smtp.ca_file": smtp.caFile, "email.smtp.verify_certificate": smtp.verifyCertificate,
            "email.smtp.username": smtp.username, "email.smtp.password": mask(smtp.password),
            "email.smtp.helo_name": smtp.heloName, "email.smtp.connect_timeout_ms": smtp.connectTimeoutMilliseconds,
            "email.smtp.command_timeout_ms": smtp.commandTimeoutMilliseconds, "email.smtp.pool_size": smtp.poolSize,
            "email.smtp.idle_timeout_seconds": smtp.idleTimeoutSeconds,
            "email.smtp.max_messages_per_connection": smtp.maxMessagesPerConnection,
            "email.http_mail.url": httpMail.url, "email.http_mail.token": mask(httpMail.token),
            "email.allow_insecure_transport": allowInsecureTransport,
            "email.apple_relay.sender": appleRelay.sender.isEmpty ? sender : appleRelay.sender,
        ]
        for mode in EmailActionJob.Mode.allCases { values["email.expiry_seconds.\(mode.rawValue)"] = expiry(mode) }
        values.merge(limits.effectiveValues) { current, _ in current }
        values.merge(code.effectiveValues) { current, _ in current }
        return values
    }

    public init(source: ConfigSource) throws {
        sender = try source.string("email.sender", default: sender)
        guard EmailAddress.mailbox(sender) != nil else {
            throw ConfigError(key: "email.sender", reason: "must be an address, or a name and <address>")
        }
        appleRelay.sender = try source.string("email.apple_relay.sender", default: appleRelay.sender)
        if !appleRelay.sender.isEmpty {
            guard let (_, address) = EmailAddress.mailbox(appleRelay.sender) else {
                throw ConfigError(key: "email.apple_relay.sender", reason: "must be an address, or a name and <address>")
            }
            guard !PrivateRelayAddresses.isRelay(address) else {
                throw ConfigError(key: "email.apple_relay.sender", reason: "must be an address on your own registered domain, not a relay address")
            }
        }
        replyTo = try source.string("email.reply_to", default: replyTo)
        if !replyTo.isEmpty, EmailAddress.mailbox(replyTo) == nil {
            throw ConfigError(key: "email.reply_to", reason: "must be an address, or a name and <address>")
        }
        appName = try source.string("email.app_name", default: appName)
        authorizedDomains = try source.stringList("email.authorized_domains", default: authorizedDomains).map { $0.lowercased() }
        for rule in authorizedDomains where !EmailLinkPolicy.isValidDomainRule(rule) {
            throw ConfigError(key: "email.authorized_domains", reason: "'\(rule)' is not a host name or *.domain rule")
        }
        linkDomains = try source.stringList("email.link_domains", default: linkDomains).map { $0.lowercased() }
        for domain in linkDomains where !EmailLinkPolicy.isValidHost(domain) {
            throw ConfigError(key: "email.link_domains", reason: "'\(domain)' is not a host name")
        }
        defaultLinkDomain = try source.string("email.default_link_domain", default: defaultLinkDomain).lowercased()
        guard linkDomains.contains(defaultLinkDomain) else {
            throw ConfigError(key: "email.default_link_domain", reason: "must be one of email.link_domains")
        }
        linkPath = try source.string("email.link_path", default: linkPath)
        guard linkPath.hasPrefix("/"), linkPath.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/_-.".contains($0)) }) else {
            throw ConfigError(key: "email.link_path", reason: "must be a path of letters, digits, '/', '_', '-', '.'")
        }
        for mode in EmailActionJob.Mode.allCases {
            expirySeconds[mode] = try source.int("email.expiry_seconds.\(mode.rawValue)", default: expiry(mode), range: 1...2_592_000)
        }
        unknownAddress = try source.choice("email.unknown_address", default: unknownAddress)
        limits = try Limits.read(source)
        code = try Code.read(source)
        // Relative to the configuration file's directory (Config/herald.yaml: Config/templates/email).
        templatesDirectory = try source.path("email.templates_dir", default: "templates/email")
        providers = try source.stringList("email.providers", default: providers.map(\.rawValue)).map {
            guard let kind = ProviderKind(rawValue: $0) else {
                throw ConfigError(key: "email.providers", reason: "'\($0)' is not one of \(ProviderKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        guard !providers.isEmpty else { throw ConfigError(key: "email.providers", reason: "name at least one provider") }
        providerTimeoutMilliseconds = try source.int("email.provider_timeout_ms", default: providerTimeoutMilliseconds, range: 100...600_000)
        smtp.host = try source.string("email.smtp.host", default: smtp.host)
        smtp.port = try source.int("email.smtp.port", default: smtp.port, range: 1...65535)
        smtp.tls = try source.choice("email.smtp.tls", default: smtp.tls)
        smtp.caFile = try source.string("email.smtp.ca_file", default: smtp.caFile)
        smtp.verifyCertificate = try source.bool("email.smtp.verify_certificate", default: smtp.verifyCertificate)
        smtp.username = try source.string("email.smtp.username", default: smtp.username)
        smtp.password = try source.string("email.smtp.password", default: "", secret: true)
        smtp.heloName = try source.string("email.smtp.helo_name", default: smtp.heloName)
        smtp.connectTimeoutMilliseconds = try source.int("email.smtp.connect_timeout_ms", default: smtp.connectTimeoutMilliseconds, range: 100...120_000)
        smtp.commandTimeoutMilliseconds = try source.int("email.smtp.command_timeout_ms", default: smtp.commandTimeoutMilliseconds, range: 100...600_000)
        smtp.poolSize = try source.int("email.smtp.pool_size", default: smtp.poolSize, range: 1...256)
        smtp.idleTimeoutSeconds = try source.int("email.smtp.idle_timeout_seconds", default: smtp.idleTimeoutSeconds, range: 1...3600)
        smtp.maxMessagesPerConnection = try source.int("email.smtp.max_messages_per_connection", default: smtp.maxMessagesPerConnection, range: 1...1_000_000)
        httpMail.url = try source.string("email.http_mail.url", default: "")
        httpMail.token = try source.string("email.http_mail.token", default: "", secret: true)
        allowInsecureTransport = try source.bool("email.allow_insecure_transport", default: false)
        try checkProviders()
    }

    /// Each provider in use has what it needs.
    func checkProviders() throws(ConfigError) {
        for provider in providers {
            switch provider {
            case .httpMail where httpMail.url.isEmpty || httpMail.token.isEmpty:
                throw ConfigError(key: "email.http_mail", reason: "url and token are required when http_mail is a provider")
            case .smtp where !smtp.username.isEmpty && smtp.password.isEmpty:
                throw ConfigError(key: "email.smtp.password", reason: "required when email.smtp.username is set")
            case .smtp where smtp.tls == .none:
                // Never the password in clear, even with allow_insecure_transport.
                if !smtp.username.isEmpty, !ClearTextPolicy.isLoopback(smtp.host) {
                    throw ConfigError(key: "email.smtp.tls", reason: "AUTH without TLS is allowed only to a loopback relay")
                }
                try ClearTextPolicy.check(host: smtp.host, key: "email.smtp.tls", allowed: allowInsecureTransport, allowKey: "email.allow_insecure_transport")
            case .httpMail:
                try ClearTextPolicy.check(url: httpMail.url, key: "email.http_mail.url", allowed: allowInsecureTransport, allowKey: "email.allow_insecure_transport")
            default: continue
            }
        }
    }
}

extension HeraldConfiguration {
    /// `email.*`
    public var email: EmailConfiguration {
        get { self[EmailConfiguration.self] }
        set { self[EmailConfiguration.self] = newValue }
    }
}
