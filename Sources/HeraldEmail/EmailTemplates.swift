import Foundation
import HeraldRuntime
import HeraldWire
import Mustache

/// The email texts, per locale and mode, loaded from `email.templates_dir`: files
/// `<locale>.<mode>.subject.mustache`, `….txt.mustache` and `….html.mustache` for each mode
/// and for `no_account` (`default` is the last fallback and must have them all).
///
/// Lookup walks `pt-BR` → `pt` → `default` per mode. Values: `app_name`, `email`, `link`,
/// `continue_host`, `expires_minutes`. HTML templates escape `{{value}}`; text templates
/// use `{{{value}}}` (no HTML escaping in plain text). The one-time code email (`email.code`
/// jobs) is the key ``code``: its bodies carry `code` instead of a link, and its subject never
/// does (a subject is not kept secret).
public struct EmailTemplates: Sendable {
    /// One message's three parts.
    public struct Set: Sendable {
        public var subject: MustacheTemplate
        public var text: MustacheTemplate
        public var html: MustacheTemplate
    }

    /// The template key of the note for an address without an account.
    public static let noAccount = "no_account"
    /// The template key of the one-time code email.
    public static let code = "code"

    /// Locale (lower-cased, `_` → `-`) → key (mode or `no_account`) → templates.
    let locales: [String: [String: Set]]
    public let appName: String

    public init(locales: [String: [String: Set]], appName: String) throws(ConfigError) {
        guard let fallback = locales["default"] else {
            throw ConfigError(key: "email.templates_dir", reason: "the default.* templates are missing")
        }
        for key in EmailActionJob.Mode.allCases.map(\.rawValue) + [Self.noAccount, Self.code] where fallback[key] == nil {
            throw ConfigError(key: "email.templates_dir", reason: "default.\(key).subject|txt|html.mustache are missing")
        }
        self.locales = locales
        self.appName = appName
    }

    /// Loads every `<locale>.<key>.<part>.mustache` in `directory` (a flat folder, so it
    /// can be a Kubernetes ConfigMap).
    public static func load(directory: String, appName: String) throws -> EmailTemplates {
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            throw ConfigError(key: "email.templates_dir", reason: "cannot read the directory '\(directory)'")
        }
        var parts: [String: [String: [String: MustacheTemplate]]] = [:]
        for file in files where file.hasSuffix(".mustache") {
            let pieces = file.dropLast(".mustache".count).split(separator: ".", omittingEmptySubsequences: false)
            guard pieces.count == 3, !pieces[0].isEmpty, !pieces[1].isEmpty, ["subject", "txt", "html"].contains(pieces[2]) else {
                throw ConfigError(key: "email.templates_dir", reason: "\(file): name files <locale>.<mode>.subject|txt|html.mustache")
            }
            guard let text = try? String(contentsOfFile: (directory as NSString).appendingPathComponent(file), encoding: .utf8) else {
                throw ConfigError(key: "email.templates_dir", reason: "\(file) is not UTF-8 text")
            }
            let key = String(pieces[1])
            if key == code {
                if pieces[2] == "subject", text.contains("code}}") {
                    throw ConfigError(key: "email.templates_dir", reason: "\(file): the subject must not contain the code")
                }
                if pieces[2] != "subject", !text.contains("code}}") {
                    throw ConfigError(key: "email.templates_dir", reason: "\(file) does not contain the code")
                }
            } else if key != noAccount, pieces[2] != "subject", !text.contains("link}}") {
                throw ConfigError(key: "email.templates_dir", reason: "\(file) does not contain the link")
            }
            let locale = LocaleFallback.normalize(String(pieces[0]))
            do {
                parts[locale, default: [:]][key, default: [:]][String(pieces[2])] = try MustacheTemplate(string: text.trimmingCharacters(in: .newlines))
            } catch {
                throw ConfigError(key: "email.templates_dir", reason: "\(file) is not a valid Mustache template")
            }
        }
        var locales: [String: [String: Set]] = [:]
        for (locale, keys) in parts {
            for (key, part) in keys {
                guard let subject = part["subject"], let text = part["txt"], let html = part["html"] else {
                    throw ConfigError(key: "email.templates_dir", reason: "\(locale).\(key): subject, txt and html are all needed")
                }
                locales[locale, default: [:]][key] = Set(subject: subject, text: text, html: html)
            }
        }
        return try EmailTemplates(locales: locales, appName: appName)
    }

    /// A rendered message: the parts carry the link, so they are secrets.
    public struct Rendered: Sendable {
        public var locale: String
        public var subject: String
        public var text: Secret
        public var html: Secret
    }

    /// Renders `key` (a mode's raw value or ``noAccount``) for the first locale that has it.
    public func render(_ key: String, locale: String?, email: String, link: Secret?, continueHost: String, expiresSeconds: Int) -> Rendered {
        let (name, set) = lookup(key, locale: locale)
        let values: [String: Any] = [
            "app_name": appName, "email": email, "link": link?.revealed ?? "", "continue_host": continueHost,
            "expires_minutes": max(1, expiresSeconds / 60), "expires_hours": max(1, expiresSeconds / 3600),
        ]
        let subject = EmailMessage.oneLine(set.subject.render(values))
        return Rendered(locale: name, subject: subject, text: Secret(set.text.render(values)), html: Secret(set.html.render(values)))
    }

    /// Renders the one-time code email for the first locale that has it; `masked` is its text
    /// with the code replaced by asterisks (what the dev outbox's table keeps).
    public func renderCode(locale: String?, email: String, code: Secret, expiresSeconds: Int) -> (rendered: Rendered, masked: String) {
        let (name, set) = lookup(Self.code, locale: locale)
        var values: [String: Any] = ["app_name": appName, "email": email, "code": code.revealed, "expires_minutes": max(1, expiresSeconds / 60)]
        let subject = EmailMessage.oneLine(set.subject.render(values))
        let rendered = Rendered(locale: name, subject: subject, text: Secret(set.text.render(values)), html: Secret(set.html.render(values)))
        values["code"] = String(repeating: "*", count: code.revealed.count)
        return (rendered, set.text.render(values))
    }

    func lookup(_ key: String, locale: String?) -> (String, Set) {
        for candidate in LocaleFallback.chain(locale) {
            if let set = locales[candidate]?[key] { return (candidate, set) }
        }
        return ("default", locales["default"]![key]!)
    }
}
