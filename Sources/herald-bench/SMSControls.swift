import HeraldRuntime
import HeraldSMS

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
}
