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

        public var enabled: Bool { !baseURL.isEmpty }

        static func read(_ source: ConfigSource, providers: [ProviderKind], allowInsecureTransport: Bool) throws -> Receipts {
            var receipts = Receipts()
            receipts.baseURL = try source.string("sms.receipts.base_url", default: "")
            receipts.kannelDLRMask = try source.int("sms.receipts.kannel_dlr_mask", default: receipts.kannelDLRMask, range: 1...31)
            receipts.kannelSecret = try source.string("sms.receipts.kannel_secret", default: "", secret: true)
            try receipts.check(providers: providers, allowInsecureTransport: allowInsecureTransport)
            return receipts
        }

        func check(providers: [ProviderKind], allowInsecureTransport: Bool) throws(ConfigError) {
            if !kannelSecret.isEmpty, kannelSecret.utf8.count < 32 {
                throw ConfigError(key: "sms.receipts.kannel_secret", reason: "must be at least 32 characters (random)")
            }
            guard enabled else { return }
            let lower = baseURL.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), URL(string: baseURL)?.host != nil, !baseURL.hasSuffix("/"),
                  URL(string: baseURL)?.query == nil else {
                throw ConfigError(key: "sms.receipts.base_url", reason: "must be an http(s) URL without a query or a trailing slash")
            }
            try ClearTextPolicy.check(url: baseURL, key: "sms.receipts.base_url", allowed: allowInsecureTransport, allowKey: "sms.allow_insecure_transport")
            if providers.contains(.kannel), kannelSecret.isEmpty {
                throw ConfigError(key: "sms.receipts.kannel_secret", reason: "is required for Kannel's receipts when sms.receipts.base_url is set")
            }
        }

        /// Twilio's `StatusCallback`, and the URL its signature covers.
        public var twilioURL: String { baseURL + "/v1/receipts/twilio" }

        /// The `dlr-url` of one Kannel message: Herald's id for it and that id's signature, then
        /// Kannel's escapes for the DLR type (`%d`), its time (`%T`, Unix seconds) and the SMSC's
        /// reply (`%A`).
        public func kannelURL(id: String) -> String {
            baseURL + "/v1/receipts/kannel?id=\(id)&sig=\(Self.kannelSignature(id: id, secret: kannelSecret))&type=%d&ts=%T&reply=%A"
        }

        /// The signature in a Kannel `dlr-url`: HMAC-SHA256 of `kannel-dlr:<id>` under
        /// `kannel_secret`, base64url without padding.
        public static func kannelSignature(id: String, secret: String) -> String {
            let mac = HMAC<SHA256>.authenticationCode(for: Array("kannel-dlr:\(id)".utf8), using: SymmetricKey(data: Array(secret.utf8)))
            return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }

        /// True when `signature` is `id`'s (compared in constant time).
        public static func kannelSignatureHolds(id: String, signature: String, secret: String) -> Bool {
            var base64 = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard !secret.isEmpty, let given = Data(base64Encoded: base64) else { return false }
            return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: Array("kannel-dlr:\(id)".utf8), using: SymmetricKey(data: Array(secret.utf8)))
        }

        public var effectiveValues: [String: Any] {
            ["sms.receipts.base_url": baseURL, "sms.receipts.kannel_dlr_mask": kannelDLRMask,
             "sms.receipts.kannel_secret": kannelSecret.isEmpty ? "" : "***"]
        }
    }
}
