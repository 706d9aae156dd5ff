import Foundation
import HeraldRuntime

extension SMSConfiguration {
    /// `sms.whatsapp.*`: the same verification's code as a WhatsApp authentication template
    /// (WhatsApp Business Cloud API), for a job whose `channel` is `whatsapp` (docs/whatsapp.md).
    public struct WhatsApp: Sendable {
        /// The Graph API with its version, no trailing slash.
        public var baseURL = "https://graph.facebook.com/v21.0"
        /// The business phone number's id (the sender).
        public var phoneNumberID = ""
        /// A system user's access token with `whatsapp_business_messaging` (secret).
        public var accessToken = ""
        /// The approved authentication template (copy-code or one-tap button): its body's one
        /// parameter and its button's are the code.
        public var template = ""
        /// Locale → the template's language code (`default` for any other): `en: en_US`.
        public var languages: [String: String] = ["default": "en_US"]
        /// The Meta app's secret: the key of `X-Hub-Signature-256` on its status webhooks (secret).
        public var appSecret = ""
        /// What herald-api answers Meta's subscription handshake with (`hub.verify_token`) (secret).
        public var verifyToken = ""

        /// Sends can go out: what the provider needs is set.
        public var enabled: Bool { !phoneNumberID.isEmpty && !accessToken.isEmpty && !template.isEmpty }

        /// The template's language for a job's locale (`pt-BR` → `pt-br`, `pt`, `default`).
        public func language(for locale: String?) -> String {
            for candidate in LocaleFallback.chain(locale) { if let code = languages[candidate] { return code } }
            return languages["default"] ?? "en_US"
        }

        static func read(_ source: ConfigSource) throws -> WhatsApp {
            var w = WhatsApp()
            w.baseURL = try source.string("sms.whatsapp.base_url", default: w.baseURL)
            w.phoneNumberID = try source.string("sms.whatsapp.phone_number_id", default: "")
            w.accessToken = try source.string("sms.whatsapp.access_token", default: "", secret: true)
            w.template = try source.string("sms.whatsapp.template", default: "")
            w.appSecret = try source.string("sms.whatsapp.app_secret", default: "", secret: true)
            w.verifyToken = try source.string("sms.whatsapp.verify_token", default: "", secret: true)
            for (locale, code) in source.map("sms.whatsapp.languages") {
                guard let code = code as? String, code.range(of: #"^[a-z]{2,3}(_[A-Z]{2})?$"#, options: .regularExpression) != nil else {
                    throw ConfigError(key: "sms.whatsapp.languages.\(locale)", reason: "must be a WhatsApp language code (en_US, de, pt_BR)")
                }
                w.languages[LocaleFallback.normalize(locale)] = code
            }
            if !w.phoneNumberID.isEmpty || !w.accessToken.isEmpty || !w.template.isEmpty {
                for (key, value) in [("phone_number_id", w.phoneNumberID), ("access_token", w.accessToken), ("template", w.template)] where value.isEmpty {
                    throw ConfigError(key: "sms.whatsapp.\(key)", reason: "is required with the other sms.whatsapp keys")
                }
            }
            let url = URL(string: w.baseURL)
            guard url?.host != nil, ["https", "http"].contains(url?.scheme ?? ""), !w.baseURL.hasSuffix("/") else {
                throw ConfigError(key: "sms.whatsapp.base_url", reason: "must be an http(s) URL without a trailing slash")
            }
            return w
        }

        public var effectiveValues: [String: Any] {
            ["sms.whatsapp.base_url": baseURL, "sms.whatsapp.phone_number_id": phoneNumberID,
             "sms.whatsapp.access_token": accessToken.isEmpty ? "" : "***", "sms.whatsapp.template": template,
             "sms.whatsapp.languages": languages, "sms.whatsapp.app_secret": appSecret.isEmpty ? "" : "***",
             "sms.whatsapp.verify_token": verifyToken.isEmpty ? "" : "***"]
        }
    }
}
