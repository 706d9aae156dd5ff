import HeraldPhoneCheck
import HeraldRuntime

// The SMS texts' registrations (India's DLT and the like) as herald-sms sends and checks them.

extension SMSConfiguration {
    /// What goes with one SMS to the providers that take it (``PhoneMessage/registration``).
    public struct RegisteredSend: Sendable, Equatable {
        public var sender: String?
        public var entityID: String?
        public var templateID: String?
    }

    /// The registration of `region` for the text `key` in `locale`, or nil when the region has none.
    func registration(region: String?, key: String, locale: String) -> RegisteredSend? {
        guard let region, let registration = registrations[region] else { return nil }
        return RegisteredSend(sender: registration.sender, entityID: registration.entityID,
                              templateID: registration.templateID(key: key, locale: locale))
    }

    /// Every text key the templates have is registered in each region whose registration lists
    /// templates (an operator refuses an unregistered text: better a worker that does not start).
    func checkRegistrations(_ templates: SMSTemplates) throws(ConfigError) {
        for (region, registration) in registrations.sorted(by: { $0.key < $1.key }) where !registration.templates.isEmpty {
            for (locale, key) in templates.textKeys where registration.templateID(key: key, locale: locale) == nil {
                throw ConfigError(key: "sms.regions.registration.\(region).templates",
                                  reason: "no template id for \(locale).yaml's \(key) (give '\(key)' or '\(locale)/\(key)')")
            }
        }
    }
}
