import Foundation
import HeraldRuntime

/// `api.*`: herald-api's HTTP server (docs/api.md, docs/configuration.md).
public struct APIConfiguration: ConfigurationSection {
    public static let key = "api"
    /// herald-api's operations port when `http.port` is 0 (the workers use 9101 to 9105).
    public static let defaultOpsPort = 9106

    /// The address the API listens on. Anything but loopback needs TLS (`api.tls.*`) or
    /// `api.allow_insecure_transport` (behind an ingress that terminates TLS).
    public var host = "127.0.0.1"
    public var port = 8090
    /// Request bodies above this many bytes are refused with 413 before they are read further.
    public var maxBodyBytes = 16_384
    /// Peers whose `X-Forwarded-For` is believed (addresses or CIDR blocks); the client IP of a
    /// request from any other peer is the peer's own address.
    public var trustedProxies: [String] = []
    /// Requests per second per API key (a token bucket per replica; `burst` requests at once).
    public var keyRatePerSecond = 100
    public var keyRateBurst = 200
    /// Refused authentications per second per source address (a token bucket per replica;
    /// `burst` at once): past it a source is answered 429 before its key is read or its secret hashed.
    public var authFailureRatePerSecond = 1
    public var authFailureBurst = 20
    /// Signed provider callbacks (`/v1/receipts/…`) per second per source address (a token
    /// bucket per replica; `burst` at once): a provider's receipts come from a handful of
    /// addresses, two or three per SMS. Refused callbacks get a hundredth of it.
    public var receiptRatePerSecond = 2_000
    public var receiptRateBurst = 10_000
    /// How long a request waits for the broker's confirm of its job before answering 503.
    public var publishTimeoutMilliseconds = 5_000
    /// How long a start waits for the worker's decision before answering 202 `queued` (the job
    /// is recorded and handled once; its outcome is read later). 0: never wait.
    public var decisionWaitMilliseconds = 3_000
    /// TLS served by herald-api itself: PEM certificate chain and private key, read again on
    /// SIGHUP and when the files change.
    public var tlsCertificateFile = ""
    public var tlsKeyFile = ""
    public var allowInsecureTransport = false
    /// The URL clients reach the API at (`https://verify.example.com`), for the `url` and page
    /// links of Twilio resources. Empty: taken from each request's scheme and Host header.
    public var publicURL = ""

    public var tlsEnabled: Bool { !tlsCertificateFile.isEmpty }

    public init() {}

    public init(source: ConfigSource) throws {
        host = try source.string("api.host", default: host)
        port = try source.int("api.port", default: port, range: 1...65_535)
        maxBodyBytes = try source.int("api.max_body_bytes", default: maxBodyBytes, range: 1_024...1_048_576)
        trustedProxies = try source.stringList("api.trusted_proxies", default: [])
        for proxy in trustedProxies where CIDRBlock(proxy) == nil {
            throw ConfigError(key: "api.trusted_proxies", reason: "every entry must be an IP address or a CIDR block (10.0.0.0/8, fd00::/8)")
        }
        keyRatePerSecond = try source.int("api.key_rate_per_second", default: keyRatePerSecond, range: 1...100_000)
        keyRateBurst = try source.int("api.key_rate_burst", default: keyRateBurst, range: 1...1_000_000)
        authFailureRatePerSecond = try source.int("api.auth_failures.rate_per_second", default: authFailureRatePerSecond, range: 1...100_000)
        authFailureBurst = try source.int("api.auth_failures.burst", default: authFailureBurst, range: 1...1_000_000)
        receiptRatePerSecond = try source.int("api.receipts.rate_per_second", default: receiptRatePerSecond, range: 1...100_000)
        receiptRateBurst = try source.int("api.receipts.rate_burst", default: receiptRateBurst, range: 1...1_000_000)
        publishTimeoutMilliseconds = try source.int("api.publish_timeout_ms", default: publishTimeoutMilliseconds, range: 100...60_000)
        decisionWaitMilliseconds = try source.int("api.decision_wait_ms", default: decisionWaitMilliseconds, range: 0...30_000)
        tlsCertificateFile = try source.path("api.tls.certificate_file", default: "")
        tlsKeyFile = try source.path("api.tls.key_file", default: "")
        if tlsCertificateFile.isEmpty != tlsKeyFile.isEmpty {
            throw ConfigError(key: tlsCertificateFile.isEmpty ? "api.tls.certificate_file" : "api.tls.key_file",
                              reason: "api.tls.certificate_file and api.tls.key_file go together")
        }
        allowInsecureTransport = try source.bool("api.allow_insecure_transport", default: false)
        if !tlsEnabled {
            try ClearTextPolicy.check(host: host, key: "api.host", allowed: allowInsecureTransport, allowKey: "api.allow_insecure_transport")
        }
        publicURL = try source.string("api.public_url", default: "")
        if !publicURL.isEmpty {
            let lower = publicURL.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URL(string: publicURL)?.host != nil, !publicURL.hasSuffix("/") else {
                throw ConfigError(key: "api.public_url", reason: "must be an http(s) URL without a trailing slash")
            }
        }
    }

    /// Every `api.*` key with its effective value (for `heraldctl config check`).
    public var effectiveValues: [String: Any] {
        [
            "api.host": host, "api.port": port, "api.max_body_bytes": maxBodyBytes, "api.trusted_proxies": trustedProxies,
            "api.key_rate_per_second": keyRatePerSecond, "api.key_rate_burst": keyRateBurst,
            "api.auth_failures.rate_per_second": authFailureRatePerSecond, "api.auth_failures.burst": authFailureBurst,
            "api.receipts.rate_per_second": receiptRatePerSecond, "api.receipts.rate_burst": receiptRateBurst,
            "api.publish_timeout_ms": publishTimeoutMilliseconds, "api.decision_wait_ms": decisionWaitMilliseconds, "api.tls.certificate_file": tlsCertificateFile,
            "api.tls.key_file": tlsKeyFile, "api.allow_insecure_transport": allowInsecureTransport, "api.public_url": publicURL,
        ]
    }
}

extension HeraldConfiguration {
    /// `api.*`
    public var api: APIConfiguration {
        get { self[APIConfiguration.self] }
        set { self[APIConfiguration.self] = newValue }
    }
}
