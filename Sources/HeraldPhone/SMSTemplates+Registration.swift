import HeraldPhoneCheck
import HeraldRuntime

extension SMSConfiguration {
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
