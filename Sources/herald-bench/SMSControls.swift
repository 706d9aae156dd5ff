import HeraldPhone
import HeraldPhoneCheck
import HeraldRuntime

/// The abuse controls of issue 16 (docs/abuse.md), all on, for `make bench`'s "controls on"
/// run of herald-sms next to the same run with them off: their cost per job. One place:
/// each control adds its settings here, tuned so that it is exercised on every job (read,
/// counted, checked) but refuses none of the benchmark's jobs (distinct German mobile
/// numbers, one SMS each), since a refusal would measure a shorter path.
enum SMSControls {
    static func on(_ sms: inout SMSConfiguration) {
        // Region and number-type policy, per-region caps (16a): every number is read by
        // libphonenumber in both runs; here the allow list and the type check decide on it,
        // and two more counters (region_hour, region_day) are taken per job.
        sms.regions = .init(mode: .allow, regions: ["DE", "AT", "CH"])
        sms.numberTypes = SMSConfiguration.defaultNumberTypes
        sms.regionCaps = .init(defaultCap: .init(hour: 100_000_000, day: 100_000_000))
        // Fraud guard (16c): every job is judged (herald.fraud_guard_check sums its region's
        // and prefix's window and marks the verification) and every send counted by the
        // trigger; floors no benchmark reaches, so nothing is paused. App verification is
        // not in this run: its cost is the captcha provider's round trip or one receipt update.
        sms.fraudGuard.enabled = true
        sms.fraudGuard.regionFloor = 100_000_000
        sms.fraudGuard.prefixFloor = 100_000_000
    }

    /// The same controls for real herald-sms processes, as configuration overrides
    /// (HERALD_<KEY>, docs/configuration.md). Two differences, same cost per job: the region
    /// policy is a deny list (Config/herald.yaml sets `sms.regions.deny: []`, and allow and
    /// deny together are refused), and the fraud guard's floors are their maximum, 10⁷.
    static let environment: [String: String] = [
        "HERALD_SMS_REGIONS_DENY": "KP,IR,SY,CU",
        "HERALD_SMS_NUMBER_TYPES_ALLOW": SMSConfiguration.defaultNumberTypes.map(\.rawValue).sorted().joined(separator: ","),
        "HERALD_SMS_REGIONS_CAPS_DEFAULT_HOUR": "100000000",
        "HERALD_SMS_REGIONS_CAPS_DEFAULT_DAY": "100000000",
        "HERALD_SMS_FRAUD_GUARD_ENABLED": "true",
        "HERALD_SMS_FRAUD_GUARD_REGION_FLOOR": "10000000",
        "HERALD_SMS_FRAUD_GUARD_PREFIX_FLOOR": "10000000",
    ]
}
