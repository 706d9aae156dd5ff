import HeraldRuntime

extension SMSConfiguration {
    /// What a region's regulator requires registered with every SMS (`sms.regions.registration`):
    /// India's DLT, for one, refuses an SMS whose sender, principal entity id and template id do
    /// not match what was registered. Per region code: `sender` (the registered header: Twilio's
    /// `From`, Kannel's `from`), `entity_id`, and `templates`, a template id per text key
    /// (`sign_in`, `sign_in_short`, …, or `<locale>/<key>` for one locale's text).
    public struct Registration: Sendable, Equatable {
        public var sender: String?
        public var entityID: String?
        /// Text key (or `<locale>/<key>`) → template id.
        public var templates: [String: String] = [:]

        public init(sender: String? = nil, entityID: String? = nil, templates: [String: String] = [:]) {
            self.sender = sender
            self.entityID = entityID
            self.templates = templates
        }

        /// The template id of the text `key` in `locale`: the locale's own, else the key's.
        public func templateID(key: String, locale: String) -> String? {
            templates["\(locale)/\(key)"] ?? templates[key]
        }
    }

    static func registrations(_ source: ConfigSource) throws -> [String: Registration] {
        let prefix = "sms.regions.registration"
        var out: [String: Registration] = [:]
        let given = source.map(prefix).keys
        // A key that is none of these (`entityid`) would be read by no one: DLT would drop every SMS.
        for key in given.sorted() {
            let parts = key.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, ["sender", "entity_id"].contains(parts[1]) || parts[1].hasPrefix("templates.") else {
                throw ConfigError(key: "\(prefix).\(key)", reason: "is not one of sender, entity_id, templates.<key>")
            }
        }
        let named = Set(given.compactMap { $0.split(separator: ".").first.map(String.init) })
        for region in named.sorted() {
            guard PhoneNumberClassifier.isSupportedRegion(region) else {
                throw ConfigError(key: "\(prefix).\(region)", reason: "'\(region)' is not a region code libphonenumber knows (ISO 3166-1 alpha-2, upper case)")
            }
            func text(_ name: String, max: Int) throws -> String? {
                let key = "\(prefix).\(region).\(name)"
                let value = try source.string(key, default: "")
                guard !value.isEmpty else { return nil }
                guard value.utf8.count <= max, value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
                    throw ConfigError(key: key, reason: "must be 1 to \(max) printable ASCII characters without spaces")
                }
                return value
            }
            var registration = Registration(sender: try text("sender", max: 20), entityID: try text("entity_id", max: 64))
            for (key, value) in source.map("\(prefix).\(region).templates") {
                guard let id = value as? String ?? (value as? Int).map(String.init), !id.isEmpty, id.utf8.count <= 64,
                      id.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) else {
                    throw ConfigError(key: "\(prefix).\(region).templates.\(key)", reason: "must be a template id of 1 to 64 printable ASCII characters")
                }
                registration.templates[key] = id
            }
            if registration.entityID != nil, registration.templates.isEmpty {
                throw ConfigError(key: "\(prefix).\(region).templates", reason: "is required with entity_id: a registered template id for every text")
            }
            out[region] = registration
        }
        return out
    }
}
