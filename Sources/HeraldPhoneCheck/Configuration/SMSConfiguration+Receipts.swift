import Crypto
import Foundation
import HeraldRuntime

extension SMSConfiguration {
    /// `sms.receipts.*`: where the providers report what became of each SMS (docs/sms.md,
    /// "Delivery receipts"). herald-sms asks for receipts when it sends, herald-api takes them.
    public struct Receipts: Sendable {
        /// herald-api as the providers reach it (`https://herald.example.com`, no trailing slash):
        /// Twilio's `StatusCallback` is this and `/v1/receipts/twilio`, Kannel's `dlr-url` this and
        /// `/v1/receipts/kannel?…`, and herald-api checks Twilio's signature over exactly that URL.
        /// Empty: no receipts asked for.
        public var baseURL = ""
        /// Kannel's `dlr-mask`: the DLR types it reports (1 delivered, 2 undelivered, 4 queued on
        /// the SMSC, 8 accepted by the SMSC, 16 refused by the SMSC; 31 all of them).
        public var kannelDLRMask = 31
        /// The key of the signature each Kannel `dlr-url` carries (Kannel cannot sign its
        /// requests): at least 32 characters, shared by herald-sms and herald-api.
        public var kannelSecret = ""
        /// A Kannel `dlr-url` is taken for this long after the send (its signature carries the
        /// end), and a receipt's attempt is looked for this far back: the longest an SMSC keeps
        /// trying a message (its validity period) plus its report's delay.
        public var maxAgeHours = 96
        /// Where Kannel's reports may come from (addresses or CIDR blocks; the client address as
        /// `api.trusted_proxies` resolves it); empty: this host only (127.0.0.0/8, ::1).
        public var kannelAllowedSources: [String] = []

        public var enabled: Bool { !baseURL.isEmpty }

        static func read(_ source: ConfigSource, providers: [ProviderKind], allowInsecureTransport: Bool) throws -> Receipts {
            var receipts = Receipts()
            receipts.baseURL = try source.string("sms.receipts.base_url", default: "")
            receipts.kannelDLRMask = try source.int("sms.receipts.kannel_dlr_mask", default: receipts.kannelDLRMask, range: 1...31)
            receipts.kannelSecret = try source.string("sms.receipts.kannel_secret", default: "", secret: true)
            receipts.maxAgeHours = try source.int("sms.receipts.max_age_hours", default: receipts.maxAgeHours, range: 1...720)
            receipts.kannelAllowedSources = try source.stringList("sms.receipts.kannel_allowed_sources", default: [])
            for entry in receipts.kannelAllowedSources where CIDRBlock(entry) == nil {
                throw ConfigError(key: "sms.receipts.kannel_allowed_sources", reason: "every entry must be an IP address or a CIDR block")
            }
            try receipts.check(providers: providers, allowInsecureTransport: allowInsecureTransport)
            return receipts
        }

        func check(providers: [ProviderKind], allowInsecureTransport: Bool) throws(ConfigError) {
            if !kannelSecret.isEmpty, kannelSecret.utf8.count < 32 {
                throw ConfigError(key: "sms.receipts.kannel_secret", reason: "must be at least 32 characters (random)")
            }
            guard enabled else { return }
            let lower = baseURL.lowercased()
            let url = URL(string: baseURL)
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), url?.host != nil, !baseURL.hasSuffix("/"),
                  url?.query == nil, url?.fragment == nil, url?.user == nil, url?.password == nil else {
                throw ConfigError(key: "sms.receipts.base_url", reason: "must be an http(s) URL without credentials, a query, a fragment or a trailing slash")
            }
            try ClearTextPolicy.check(url: baseURL, key: "sms.receipts.base_url", allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
            if providers.contains(.kannel), kannelSecret.isEmpty {
                throw ConfigError(key: "sms.receipts.kannel_secret", reason: "is required for Kannel's receipts when sms.receipts.base_url is set")
            }
        }

        /// Twilio's `StatusCallback`, and the URL its signature covers.
        public var twilioURL: String { baseURL + "/v1/receipts/twilio" }

        /// The `dlr-url` of one Kannel message sent `now`: Herald's id for it, the end of its
        /// validity (`exp`, Unix seconds: now + `max_age_hours`) and their signature, then Kannel's
        /// escapes for the DLR type (`%d`), its time (`%T`, Unix seconds) and the SMSC's reply (`%A`).
        public func kannelURL(id: String, now: Date = Date()) -> String {
            let expires = Int(now.timeIntervalSince1970) + maxAgeHours * 3600
            return baseURL + "/v1/receipts/kannel?id=\(id)&exp=\(expires)&sig=\(Self.kannelSignature(id: id, expires: expires, secret: kannelSecret))"
                + "&type=%d&ts=%T&reply=%A"
        }

        /// The signature in a Kannel `dlr-url`: HMAC-SHA256 of `kannel-dlr:<id>:<exp>` under
        /// `kannel_secret`, base64url without padding. Kannel fills in the type, time and reply
        /// itself: those it cannot be given signed (hence `kannel_allowed_sources`).
        public static func kannelSignature(id: String, expires: Int, secret: String) -> String {
            let mac = HMAC<SHA256>.authenticationCode(for: kannelSigned(id: id, expires: expires), using: SymmetricKey(data: Array(secret.utf8)))
            return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }

        /// True when `signature` is that of `id` and `expires` (compared in constant time).
        public static func kannelSignatureHolds(id: String, expires: Int, signature: String, secret: String) -> Bool {
            var base64 = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard !secret.isEmpty, let given = Data(base64Encoded: base64) else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: kannelSigned(id: id, expires: expires),
                                                          using: SymmetricKey(data: Array(secret.utf8)))
        }

        /// What a Kannel `dlr-url`'s signature covers.
        private static func kannelSigned(id: String, expires: Int) -> [UInt8] { Array("kannel-dlr:\(id):\(expires)".utf8) }

        public var effectiveValues: [String: Any] {
            ["sms.receipts.base_url": baseURL, "sms.receipts.kannel_dlr_mask": kannelDLRMask, "sms.receipts.max_age_hours": maxAgeHours,
             "sms.receipts.kannel_allowed_sources": kannelAllowedSources,
             "sms.receipts.kannel_secret": kannelSecret.isEmpty ? "" : "***"]
        }
    }
}
