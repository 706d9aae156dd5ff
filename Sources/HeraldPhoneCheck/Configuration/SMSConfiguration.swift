import Foundation
import HeraldRuntime
import HeraldWire

/// `sms.*`: codes, templates, abuse controls and providers of `herald-sms`.
public struct SMSConfiguration: ConfigurationSection {
    public static let key = "sms"

    /// At most `max` SMS in any `windowSeconds` (sliding: see `SQL/functions/sms_rate_take.sql`).
    public typealias Limit = RateLimit

    public enum ProviderKind: String, Sendable, CaseIterable { case twilio, kannel, webhook, outbox }

    public struct Twilio: Sendable {
        public var baseURL = "https://api.twilio.com"
        public var accountSID = ""
        public var authToken = ""
        /// A sender number or alphanumeric id; or use `messagingServiceSID`.
        public var from = ""
        public var messagingServiceSID = ""
    }

    public struct Kannel: Sendable {
        /// The smsbox `sendsms` URL.
        public var url = "http://127.0.0.1:13013/cgi-bin/sendsms"
        public var username = ""
        public var password = ""
        public var from = ""
    }

    public struct Webhook: Sendable {
        public var url = ""
        /// Standard Webhooks signing secret: `whsec_` and base64 of 24+ random bytes.
        public var secret = ""
    }

    public var appName = "Herald"
    public var codeLength = 6
    public var codeTTLSeconds = 300
    public var maxAttempts = 5
    /// A second request for the same number and purpose within this interval reuses the pending code.
    public var resendIntervalSeconds = 30
    /// Absolute once read from a ``ConfigSource`` (see ``ConfigSource/path(_:default:)``).
    public var templatesDirectory = "Config/templates/sms"
    /// When set, messages end with the WebOTP line `@origin #code`.
    public var webOTPOrigin = ""
    /// Android app id (a job's `client.app_id`) → the app's SMS Retriever hash (11 characters of
    /// base64): a message for that app carries it on a line of its own, so Android reads the code.
    public var androidAppHashes: [String: String] = [:]
    /// The most segments any template variant may need (checked at start, with a `code_length`
    /// code, the app name and the app hash and WebOTP lines): each segment is paid for. 2: the
    /// UCS-2 texts (es, pt, ru) take two with a long app name, a long code or the extra lines.
    public var maxSegments = 2
    /// Number → fixed code: no SMS, no quota; the check accepts the fixed code.
    public var testNumbers: [String: String] = [:]
    /// Region, number-type and per-region cap policy: `SMSConfiguration+NumberPolicy.swift`.
    public var regions = RegionPolicy()
    public var numberTypes = SMSConfiguration.defaultNumberTypes
    public var regionCaps = RegionCaps()
    /// Region code → what its regulator requires with every SMS (SMSConfiguration+Registration.swift).
    public var registrations: [String: Registration] = [:]
    public var phoneLimit = Limit(max: 5, windowSeconds: 3600)
    public var prefixLimit = Limit(max: 50, windowSeconds: 3600)
    /// Digits dropped from the end of a number to make its prefix (3: ranges of 1,000 numbers).
    public var prefixDropDigits = 3
    public var ipLimit = Limit(max: 20, windowSeconds: 3600)
    /// IPv6 clients share the IP limit per network of this many bits (``ClientIP/limitKey(ipv6PrefixLength:)``).
    public var ipv6PrefixLength = 64
    /// `sms.guessing.*`: the lockout after too many wrong codes (SMSConfiguration+Guessing.swift).
    public var guessing = Guessing()
    public var globalLimit = Limit(max: 100_000, windowSeconds: 3600)
    /// `force_resend` requests per number.
    public var resendLimit = Limit(max: 3, windowSeconds: 3600)
    /// Tried in this order; the next on a transient error or timeout.
    public var providers: [ProviderKind] = [.outbox]
    public var providerTimeoutMilliseconds = 10_000
    public var twilio = Twilio()
    public var kannel = Kannel()
    public var webhook = Webhook()
    /// `sms.receipts.*`: delivery receipts (SMSConfiguration+Receipts.swift).
    public var receipts = Receipts()
    /// `sms.whatsapp.*`: the code as a WhatsApp authentication template (SMSConfiguration+WhatsApp.swift).
    public var whatsapp = WhatsApp()
    /// `sms.voice.*`: the code read out in a call (SMSConfiguration+Voice.swift).
    public var voice = Voice()
    /// `sms.fallback.*`: the channels a verification tries in turn (SMSConfiguration+Fallback.swift).
    public var fallback = Fallback()
    /// Lets the providers in use reach a host other than loopback over `http://` (Kannel, a
    /// webhook, a Twilio base URL): off, such a configuration does not start (``ClearTextPolicy``).
    public var allowInsecureTransport = false
    /// `sms.fraud_guard.*` (docs/abuse.md).
    public var fraudGuard = FraudGuardConfiguration()
    /// `sms.app_verification.*` (docs/abuse.md).
    public var appVerification = AppVerificationConfiguration()

    public init() {}

    public init(source: ConfigSource) throws {
        appName = try source.string("sms.app_name", default: appName)
        codeLength = try source.int("sms.code_length", default: codeLength, range: 4...12)
        codeTTLSeconds = try source.int("sms.code_ttl_seconds", default: codeTTLSeconds, range: 30...86_400)
        maxAttempts = try source.int("sms.max_attempts", default: maxAttempts, range: 1...20)
        resendIntervalSeconds = try source.int("sms.resend_interval_seconds", default: resendIntervalSeconds, range: 0...3600)
        // Relative to the configuration file's directory (Config/herald.yaml: Config/templates/sms).
        templatesDirectory = try source.path("sms.templates_dir", default: "templates/sms")
        webOTPOrigin = try source.string("sms.webotp_origin", default: webOTPOrigin)
        androidAppHashes = try Self.appHashes(source)
        maxSegments = try source.int("sms.max_segments", default: maxSegments, range: 1...10)
        testNumbers = try Self.testNumbers(source, codeLength: codeLength)
        regions = try Self.regionPolicy(source)
        numberTypes = try Self.numberTypes(source)
        regionCaps = try Self.regionCaps(source)
        registrations = try Self.registrations(source)
        phoneLimit = try Self.limit(source, "phone", phoneLimit)
        prefixLimit = try Self.limit(source, "prefix", prefixLimit)
        prefixDropDigits = try source.int("sms.limits.prefix.drop_digits", default: prefixDropDigits, range: 1...8)
        ipLimit = try Self.limit(source, "ip", ipLimit)
        ipv6PrefixLength = try Self.ipv6Prefix(source, key: "sms.limits.ip.ipv6_prefix")
        guessing = try GuessingPolicy.read(source, prefix: "sms.guessing")
        globalLimit = try Self.limit(source, "global", globalLimit)
        resendLimit = try Self.limit(source, "resend", resendLimit)
        providers = try source.stringList("sms.providers", default: providers.map(\.rawValue)).map {
            guard let kind = ProviderKind(rawValue: $0) else {
                throw ConfigError(key: "sms.providers", reason: "'\($0)' is not one of \(ProviderKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        guard !providers.isEmpty else { throw ConfigError(key: "sms.providers", reason: "name at least one provider") }
        providerTimeoutMilliseconds = try source.int("sms.provider_timeout_ms", default: providerTimeoutMilliseconds, range: 100...120_000)
        twilio.baseURL = try source.string("sms.twilio.base_url", default: twilio.baseURL)
        twilio.accountSID = try source.string("sms.twilio.account_sid", default: "")
        twilio.authToken = try source.string("sms.twilio.auth_token", default: "", secret: true)
        twilio.from = try source.string("sms.twilio.from", default: "")
        twilio.messagingServiceSID = try source.string("sms.twilio.messaging_service_sid", default: "")
        kannel.url = try source.string("sms.kannel.url", default: kannel.url)
        kannel.username = try source.string("sms.kannel.username", default: "")
        kannel.password = try source.string("sms.kannel.password", default: "", secret: true)
        kannel.from = try source.string("sms.kannel.from", default: "")
        webhook.url = try source.string("sms.webhook.url", default: "")
        webhook.secret = try source.string("sms.webhook.secret", default: "", secret: true)
        allowInsecureTransport = try source.bool("sms.allow_insecure_transport", default: false)
        receipts = try Receipts.read(source, providers: providers, allowInsecureTransport: allowInsecureTransport)
        whatsapp = try WhatsApp.read(source)
        if whatsapp.enabled {
            try ClearTextPolicy.check(url: whatsapp.baseURL, key: "sms.whatsapp.base_url", allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
        }
        voice = try Voice.read(source, twilio: twilio, webhook: webhook)
        if voice.configuredProviders.contains(.twilio) {
            try ClearTextPolicy.check(url: twilio.baseURL, key: "sms.twilio.base_url", allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
        }
        if voice.configuredProviders.contains(.webhook) {
            try ClearTextPolicy.check(url: voice.webhookURL, key: "sms.voice.webhook_url", allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
        }
        fallback = try Fallback.read(source)
        try fallback.check(whatsapp: whatsapp.enabled, voice: voice.enabled)
        fraudGuard = try FraudGuardConfiguration(source: source)
        appVerification = try AppVerificationConfiguration(source: source, allowInsecureTransport: allowInsecureTransport)
        try checkProviders()
    }

    /// Each provider in use has what it needs.
    func checkProviders() throws(ConfigError) {
        for provider in providers {
            switch provider {
            case .twilio where twilio.accountSID.isEmpty || twilio.authToken.isEmpty:
                throw ConfigError(key: "sms.twilio", reason: "account_sid and auth_token are required when twilio is a provider")
            case .twilio where twilio.from.isEmpty && twilio.messagingServiceSID.isEmpty:
                throw ConfigError(key: "sms.twilio.from", reason: "set from or messaging_service_sid")
            case .webhook where webhook.url.isEmpty || webhook.secret.isEmpty:
                throw ConfigError(key: "sms.webhook", reason: "url and secret are required when webhook is a provider")
            default: continue
            }
        }
        try checkTransport()
    }

    /// The providers in use send nothing in clear to a host other than loopback.
    func checkTransport() throws(ConfigError) {
        let urls: [ProviderKind: (key: String, url: String)] = [
            .twilio: ("sms.twilio.base_url", twilio.baseURL), .kannel: ("sms.kannel.url", kannel.url), .webhook: ("sms.webhook.url", webhook.url),
        ]
        for provider in providers {
            guard let (key, url) = urls[provider] else { continue }
            try ClearTextPolicy.check(url: url, key: key, allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
        }
    }

    private static func limit(_ source: ConfigSource, _ name: String, _ fallback: Limit) throws -> Limit {
        Limit(max: try source.int("sms.limits.\(name).max", default: fallback.max, range: 0...100_000_000),
              windowSeconds: try source.int("sms.limits.\(name).window_seconds", default: fallback.windowSeconds, range: 1...2_592_000))
    }

    /// A mapping `com.example.app: "FA+9qCX9VSu"` in the file, or `app_id:hash,…` in HERALD_SMS_ANDROID_APP_HASHES.
    private static func appHashes(_ source: ConfigSource) throws -> [String: String] {
        var pairs: [String: String] = [:]
        for entry in try source.string("sms.android_app_hashes", default: "").split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { throw ConfigError(key: "sms.android_app_hashes", reason: "entries are app_id:hash") }
            pairs[parts[0]] = parts[1]
        }
        for (app, hash) in source.map("sms.android_app_hashes") { pairs[app] = "\(hash)" }
        for (app, hash) in pairs {
            guard !app.isEmpty, app.utf8.count <= 255, hash.range(of: #"^[A-Za-z0-9+/]{11}$"#, options: .regularExpression) != nil else {
                throw ConfigError(key: "sms.android_app_hashes", reason: "the hash of '\(app.prefix(64))' must be the 11 characters of base64 Android's SMS Retriever computes")
            }
        }
        return pairs
    }

    /// A mapping `"+15555550100": "123456"` in the file, or `number:code,…` in HERALD_SMS_TEST_NUMBERS.
    private static func testNumbers(_ source: ConfigSource, codeLength: Int) throws -> [String: String] {
        var pairs: [String: String] = [:]
        let listed = try source.string("sms.test_numbers", default: "", secret: true)
        for entry in listed.split(separator: ",") {
            let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { throw ConfigError(key: "sms.test_numbers", reason: "entries are number:code") }
            pairs[parts[0]] = parts[1]
        }
        for (number, code) in source.map("sms.test_numbers") {
            pairs[number] = "\(code)"
        }
        for (number, code) in pairs {
            do {
                _ = try PhoneNumber(number)
            } catch {
                throw ConfigError(key: "sms.test_numbers", reason: "\(Redact.phone(number)) \(error.reason)")
            }
            guard code.count == codeLength, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber) else {
                throw ConfigError(key: "sms.test_numbers", reason: "the code of \(Redact.phone(number)) must be \(codeLength) digits")
            }
        }
        return pairs
    }
}

extension HeraldConfiguration {
    /// `sms.*`
    public var sms: SMSConfiguration {
        get { self[SMSConfiguration.self] }
        set { self[SMSConfiguration.self] = newValue }
    }
}
