import Foundation
import HeraldRuntime
import HeraldWire

extension SMSConfiguration {
    /// `sms.voice.*`: the same verification's code read out in a phone call (Twilio's Calls API,
    /// with the account of `sms.twilio`), for a job whose channel is `voice` (docs/voice.md).
    public struct Voice: Sendable {
        /// The voice providers, tried in order.
        public enum Provider: String, Sendable, CaseIterable { case twilio, webhook }

        /// `sms.voice.providers`: Twilio's Calls API (with `from`), and/or a signed webhook to the
        /// operator's own telephony (`webhook_url`, signed with `sms.webhook.secret`).
        public var providers: [Provider] = [.twilio]
        /// The caller id: a Twilio number (or verified caller id) in E.164. Empty: no Twilio calls.
        public var from = ""
        /// The voice webhook (`type` `voice.call`); empty: none.
        public var webhookURL = ""
        /// `<locale>.yaml` per locale, `default.yaml` required: what the call says, read twice.
        public var templatesDirectory = "Config/templates/voice"
        /// Locale → the language `<Say>` speaks (`default` for any other): `pt-br: pt-BR`.
        public var languages: [String: String] = Voice.defaultLanguages
        /// Twilio's `voice` attribute of `<Say>` (`alice`, `Polly.Joanna`); empty: Twilio's default.
        public var voice = ""
        /// How long the phone rings before Twilio gives up (`no-answer`): Twilio's `Timeout`.
        public var ringSeconds = 30
        /// Number types a call may go to: a landline takes a call, not an SMS.
        public var numberTypes: Set<PhoneNumberType> = [.mobile, .fixedLine, .fixedLineOrMobile]

        /// The providers configured: Twilio with a caller id, the webhook with its URL.
        public var configuredProviders: [Provider] {
            providers.filter { $0 == .twilio ? !from.isEmpty : !webhookURL.isEmpty }
        }

        /// Calls can go out.
        public var enabled: Bool { !configuredProviders.isEmpty }

        static let defaultLanguages = [
            "default": "en-US", "en": "en-US", "en-gb": "en-GB", "de": "de-DE", "es": "es-ES", "fr": "fr-FR",
            "pt": "pt-PT", "pt-br": "pt-BR", "ru": "ru-RU",
        ]

        /// The language of a job's locale (`pt-BR` → `pt-br`, `pt`, `default`).
        public func language(for locale: String?) -> String {
            for candidate in LocaleFallback.chain(locale) { if let code = languages[candidate] { return code } }
            return languages["default"] ?? "en-US"
        }

        static func read(_ source: ConfigSource, twilio: Twilio, webhook: Webhook) throws -> Voice {
            var v = Voice()
            v.providers = try source.stringList("sms.voice.providers", default: v.providers.map(\.rawValue)).enumerated().map { index, name in
                guard let provider = Provider(rawValue: name) else {
                    throw ConfigError(key: "sms.voice.providers[\(index)]", reason: "'\(name)' is not one of twilio, webhook")
                }
                return provider
            }
            v.from = try source.string("sms.voice.from", default: "")
            v.webhookURL = try source.string("sms.voice.webhook_url", default: "")
            if !v.webhookURL.isEmpty {
                let url = URL(string: v.webhookURL)
                guard url?.host != nil, ["https", "http"].contains(url?.scheme ?? "") else {
                    throw ConfigError(key: "sms.voice.webhook_url", reason: "must be an http(s) URL")
                }
                if v.providers.contains(.webhook), webhook.secret.isEmpty {
                    throw ConfigError(key: "sms.webhook.secret", reason: "is required for the voice webhook (sms.voice.webhook_url): it signs its requests")
                }
            }
            v.templatesDirectory = try source.path("sms.voice.templates_dir", default: "templates/voice")
            v.voice = try source.string("sms.voice.voice", default: "")
            v.ringSeconds = try source.int("sms.voice.ring_seconds", default: v.ringSeconds, range: 5...600)
            for (locale, code) in source.map("sms.voice.languages") {
                guard let code = code as? String, code.range(of: #"^[a-z]{2,3}(-[A-Z]{2})?$"#, options: .regularExpression) != nil else {
                    throw ConfigError(key: "sms.voice.languages.\(locale)", reason: "must be a language tag Twilio's <Say> takes (en-US, de-DE, pt-BR)")
                }
                v.languages[LocaleFallback.normalize(locale)] = code
            }
            let typesKey = "sms.voice.number_types.allow"
            let names = try source.stringList(typesKey, default: v.numberTypes.map(\.rawValue).sorted())
            v.numberTypes = Set(try names.enumerated().map { index, name in
                guard let type = PhoneNumberType(rawValue: name) else {
                    throw ConfigError(key: "\(typesKey)[\(index)]", reason: "'\(name)' is not a number type")
                }
                return type
            })
            if !v.from.isEmpty {
                if (try? PhoneNumber(v.from)) == nil {
                    throw ConfigError(key: "sms.voice.from", reason: "must be a phone number in E.164 (+15555550100)")
                }
                if twilio.accountSID.isEmpty || twilio.authToken.isEmpty {
                    throw ConfigError(key: "sms.voice.from", reason: "calls go through Twilio: set sms.twilio.account_sid and sms.twilio.auth_token")
                }
            }
            return v
        }

        public var effectiveValues: [String: Any] {
            ["sms.voice.providers": providers.map(\.rawValue), "sms.voice.from": from, "sms.voice.webhook_url": webhookURL,
             "sms.voice.templates_dir": templatesDirectory, "sms.voice.languages": languages,
             "sms.voice.voice": voice, "sms.voice.ring_seconds": ringSeconds, "sms.voice.number_types.allow": numberTypes.map(\.rawValue).sorted()]
        }
    }
}
