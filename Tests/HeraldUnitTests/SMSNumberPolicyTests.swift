@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The region, number-type and per-region cap configuration: defaults, decisions, and the
/// errors that name their key (docs/abuse.md).
@Suite struct SMSNumberPolicyTests {
    func configuration(_ values: [String: Any] = [:], environment: [String: String] = [:]) throws -> SMSConfiguration {
        try SMSConfiguration(source: ConfigSource(values: values, environment: environment))
    }

    func info(_ number: String) throws -> PhoneNumberInfo {
        try PhoneNumberClassifier.classify(try PhoneNumber(number))
    }

    @Test func theDefaultsRefuseWhatPumpingEarnsOn() throws {
        let sms = try configuration()
        #expect(sms.regions == .init(mode: .deny, regions: []))
        #expect(sms.numberTypes == [.mobile, .fixedLineOrMobile])
        #expect(try sms.numberRefusal(info("+12015550123")) == nil)
        #expect(try sms.numberRefusal(info("+18762101234")) == nil)
        #expect(try sms.numberRefusal(info("+449098790000")) == "number_type_not_allowed:premium_rate")
        #expect(try sms.numberRefusal(info("+18002345678")) == "number_type_not_allowed:toll_free")
        #expect(try sms.numberRefusal(info("+33810123456")) == "number_type_not_allowed:shared_cost")
        #expect(try sms.numberRefusal(info("+445512345678")) == "number_type_not_allowed:uan")
        #expect(try sms.numberRefusal(info("+447640123456")) == "number_type_not_allowed:pager")
        #expect(try sms.numberRefusal(info("+445612345678")) == "number_type_not_allowed:voip")
        #expect(try sms.numberRefusal(info("+442071838750")) == "number_type_not_allowed:fixed_line")
    }

    @Test func denyingJamaicaKeepsTheUnitedStates() throws {
        let sms = try configuration(["sms.regions.deny": ["JM", "DO"], "sms.number_types.allow": ["mobile", "fixed_line_or_mobile", "voip"]])
        #expect(try sms.numberRefusal(info("+18762101234")) == "region_not_allowed:JM")
        #expect(try sms.numberRefusal(info("+18092345678")) == "region_not_allowed:DO")
        #expect(try sms.numberRefusal(info("+12015550123")) == nil)
        #expect(try sms.numberRefusal(info("+445612345678")) == nil)
        #expect(sms.regions.summary == "every region but DO, JM")
    }

    @Test func anAllowListKeepsOnlyItsRegions() throws {
        let sms = try configuration(environment: ["HERALD_SMS_REGIONS_ALLOW": "US, GB"])
        #expect(sms.regions == .init(mode: .allow, regions: ["US", "GB"]))
        #expect(try sms.numberRefusal(info("+12015550123")) == nil)
        #expect(try sms.numberRefusal(info("+447400123456")) == nil)
        #expect(try sms.numberRefusal(info("+16135550123")) == "region_not_allowed:CA")
        #expect(sms.regions.summary == "only GB, US")
    }

    @Test func regionCapsFallBackToTheDefault() throws {
        let sms = try configuration(["sms.regions.caps.default.hour": 100, "sms.regions.caps.JM.hour": 5, "sms.regions.caps.JM.day": 20],
                                    environment: ["HERALD_SMS_REGIONS_CAPS_DEFAULT_DAY": "1000"])
        #expect(sms.regionCaps.cap(for: "JM") == .init(hour: 5, day: 20))
        #expect(sms.regionCaps.cap(for: "US") == .init(hour: 100, day: 1000))
        var limits = PhoneStore.Limits()
        sms.regionCaps.add(to: &limits, region: "JM")
        #expect(limits.scopes == ["region_hour", "region_day"] && limits.keys == ["JM", "JM"])
        #expect(limits.maxes == [5, 20] && limits.windows == [3600, 86_400])
        var none = PhoneStore.Limits()
        try configuration().regionCaps.add(to: &none, region: "US")
        #expect(none.scopes.isEmpty)
    }

    nonisolated(unsafe) static let badPolicies: [([String: Any], String)] = [
        (["sms.regions.allow": ["US", "GB", "XX"]], "sms.regions.allow[2]"),
        (["sms.regions.deny": ["jm"]], "sms.regions.deny[0]"),
        (["sms.regions.allow": ["US"], "sms.regions.deny": ["JM"]], "sms.regions"),
        (["sms.number_types.allow": ["mobile", "landline"]], "sms.number_types.allow[1]"),
        (["sms.regions.caps.XX.hour": 5], "sms.regions.caps.XX"),
        (["sms.regions.caps.JM.hour": -5], "sms.regions.caps.JM.hour"),
        (["sms.regions.caps.JM.day": "many"], "sms.regions.caps.JM.day"),
        (["sms.regions.mode": "allow"], "sms.regions.mode"),
    ]

    @Test(arguments: 0..<8)
    func badPolicyNamesTheKey(index: Int) {
        let (values, key) = Self.badPolicies[index]
        do {
            _ = try configuration(values)
            Issue.record("accepted \(values)")
        } catch let error as ConfigError {
            #expect(error.key == key, "\(error)")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// The old calling-code keys are refused with the regions each code stands for.
    @Test func callingCodesAreRefusedWithTheirRegions() {
        do {
            _ = try configuration(["sms.regions.mode": "allow", "sms.regions.calling_codes": [1, 44]])
            Issue.record("accepted calling codes")
        } catch let error as ConfigError {
            #expect(error.key == "sms.regions.calling_codes")
            #expect(error.reason.contains("sms.regions.allow"))
            #expect(error.reason.contains("+1 = US") && error.reason.contains("JM"))
            #expect(error.reason.contains("+44 = GB"))
        } catch {
            Issue.record("\(error)")
        }
    }
}
