import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Yams

/// The SMS texts, per locale and purpose, loaded from `sms.templates_dir` (one
/// `<locale>.yaml` per locale, `default.yaml` the last fallback).
///
/// Lookup walks `pt-BR` → `pt` → `default` for the purpose's key. The rendered text is a
/// ``Secret`` (it carries the code); when it needs more than one segment and the template
/// has a `<purpose>_short` variant, the variant is used.
public struct SMSTemplates: Sendable {
    /// A template split at its `{code}` placeholders when loaded, the app name already in:
    /// rendering a job's text only joins the pieces around its code.
    struct Text: Sendable {
        let pieces: [String]

        init(_ template: String, appName: String) {
            pieces = template.split(separator: "{code}", omittingEmptySubsequences: false).map {
                $0.split(separator: "{app_name}", omittingEmptySubsequences: false).joined(separator: appName)
            }
        }

        func filled(with code: String) -> String { pieces.joined(separator: code) }
    }

    /// Locale (lower-cased, `_` → `-`) → key → template.
    let locales: [String: [String: Text]]
    public let appName: String
    public let webOTPOrigin: String
    /// Android app id → its SMS Retriever hash (`sms.android_app_hashes`).
    public let appHashes: [String: String]

    /// `configKey`: the configuration key an error names (`sms.voice.templates_dir` for a call's texts).
    public init(locales: [String: [String: String]], appName: String, webOTPOrigin: String = "",
                appHashes: [String: String] = [:], configKey: String = "sms.templates_dir") throws(ConfigError) {
        guard locales["default"] != nil else {
            throw ConfigError(key: configKey, reason: "default.yaml is missing")
        }
        for (locale, templates) in locales {
            for (key, text) in templates {
                guard text.contains("{code}") else {
                    throw ConfigError(key: configKey, reason: "\(locale).yaml: \(key) does not contain {code}")
                }
                let placeholders = Self.placeholders(in: text)
                if let unknown = placeholders.first(where: { $0 != "code" && $0 != "app_name" }) {
                    throw ConfigError(key: configKey, reason: "\(locale).yaml: \(key) uses unknown placeholder {\(unknown)}")
                }
            }
        }
        for purpose in SMSVerificationJob.Purpose.allCases where locales["default"]?[purpose.rawValue] == nil {
            throw ConfigError(key: configKey, reason: "default.yaml has no \(purpose.rawValue) text")
        }
        self.locales = locales.mapValues { $0.mapValues { Text($0, appName: appName) } }
        self.appName = appName
        self.webOTPOrigin = webOTPOrigin
        self.appHashes = appHashes
    }

    /// The templates of `sms.*`, every variant checked against `sms.max_segments` and registered
    /// where a region's registration lists templates.
    public static func load(_ sms: SMSConfiguration) throws -> SMSTemplates {
        let templates = try load(directory: sms.templatesDirectory, appName: sms.appName, webOTPOrigin: sms.webOTPOrigin, appHashes: sms.androidAppHashes)
        try templates.checkSegments(max: sms.maxSegments, codeLength: sms.codeLength)
        try sms.checkRegistrations(templates)
        return templates
    }

    /// Every (locale, text key) there is, sorted.
    var textKeys: [(String, String)] {
        locales.keys.sorted().flatMap { locale in locales[locale]!.keys.sorted().map { (locale, $0) } }
    }

    /// Every locale's text for every purpose, as a job would get it with a `codeLength`-digit
    /// code (`sms.code_length`: a Twilio Verify Service's longer `CodeLength` may need more), an
    /// app hash line when any app has one, and the WebOTP line, fits in `max` segments; else the
    /// error names the first that does not.
    public func checkSegments(max: Int, codeLength: Int) throws(ConfigError) {
        let code = Secret(String(repeating: "8", count: codeLength))
        let appID = appHashes.keys.sorted().first
        for locale in locales.keys.sorted() {
            for purpose in SMSVerificationJob.Purpose.allCases {
                let rendered = render(purpose: purpose, locale: locale, code: code, appID: appID)
                guard rendered.encoding.segments > max else { continue }
                let lines = [appID.map { _ in "app hash" }, webOTPOrigin.isEmpty ? nil : "WebOTP"].compactMap { $0 }
                throw ConfigError(key: "sms.max_segments", reason: """
                    \(rendered.locale).yaml \(purpose.rawValue) needs \(rendered.encoding.segments) segments \
                    (\(rendered.encoding.scheme.rawValue), \(rendered.encoding.units) units) with a \(codeLength)-digit code\
                    \(lines.isEmpty ? "" : " and the " + lines.joined(separator: " and ") + (lines.count > 1 ? " lines" : " line")): more than \(max); \
                    shorten it, add \(purpose.rawValue)_short, or raise sms.max_segments
                    """)
            }
        }
    }

    /// Loads every `*.yaml` in `directory`.
    public static func load(directory: String, appName: String, webOTPOrigin: String, appHashes: [String: String] = [:],
                            configKey: String = "sms.templates_dir") throws -> SMSTemplates {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".yaml") }
        } catch {
            throw ConfigError(key: configKey, reason: "cannot read the directory '\(directory)'")
        }
        var locales: [String: [String: String]] = [:]
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8),
                  let parsed = try? Yams.load(yaml: text),
                  let mapping = parsed as? [String: Any]
            else {
                throw ConfigError(key: configKey, reason: "\(name) is not a YAML mapping of purpose: text")
            }
            var templates: [String: String] = [:]
            for (key, value) in mapping {
                guard let text = value as? String else {
                    throw ConfigError(key: configKey, reason: "\(name): \(key) must be a string")
                }
                templates[key] = text
            }
            locales[LocaleFallback.normalize(String(name.dropLast(5)))] = templates
        }
        return try SMSTemplates(locales: locales, appName: appName, webOTPOrigin: webOTPOrigin, appHashes: appHashes, configKey: configKey)
    }

    /// The text for `purpose` in `locale` (with fallback), with the code and app name in, then
    /// the SMS Retriever hash of `appID`'s Android app when it has one, then the WebOTP line.
    public func render(purpose: SMSVerificationJob.Purpose, locale: String?, code: Secret, appID: String? = nil) -> RenderedSMS {
        let appHash = appID.flatMap { appHashes[$0] }
        let chain = LocaleFallback.chain(locale)
        func lookup(_ key: String) -> (String, Text)? {
            for candidate in chain {
                if let text = locales[candidate]?[key] { return (candidate, text) }
            }
            return nil
        }
        // default.yaml has every purpose (checked in init).
        var (usedLocale, template) = lookup(purpose.rawValue)!
        var key = purpose.rawValue
        var text = fill(template, code: code, appHash: appHash)
        var encoding = SMSEncoding(text)
        if encoding.segments > 1, let (shortLocale, short) = lookup(purpose.rawValue + "_short") {
            let shortText = fill(short, code: code, appHash: appHash)
            let shorter = SMSEncoding(shortText)
            if shorter.segments < encoding.segments {
                (usedLocale, template, text, encoding) = (shortLocale, short, shortText, shorter)
                key = purpose.rawValue + "_short"
            }
        }
        let mask = Secret(String(repeating: "*", count: code.revealed.count))
        return RenderedSMS(text: Secret(text), maskedText: fill(template, code: mask, appHash: appHash), locale: usedLocale, key: key, encoding: encoding)
    }

    private func fill(_ template: Text, code: Secret, appHash: String?) -> String {
        var text = template.filled(with: code.revealed)
        if let appHash {
            // Android's SMS Retriever: the app's 11-character hash anywhere in the message (its
            // own line, before WebOTP's, which must be the last).
            text += "\n\n\(appHash)"
        }
        if !webOTPOrigin.isEmpty {
            // WebOTP: the last line binds the code to the origin that may read it.
            text += "\n\n@\(webOTPOrigin) #\(code.revealed)"
        }
        return text
    }

    private static func placeholders(in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return out
    }
}

/// A rendered message: the text (it carries the code, hence a ``Secret``), the locale whose
/// template was used, and its length in SMS terms.
public struct RenderedSMS: Sendable {
    public var text: Secret
    /// The text with the code masked.
    public var maskedText: String
    public var locale: String
    /// The text's key in that locale's file: the purpose, or `<purpose>_short`.
    public var key: String
    public var encoding: SMSEncoding
}
