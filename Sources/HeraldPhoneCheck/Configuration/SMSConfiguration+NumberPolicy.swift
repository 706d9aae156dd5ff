import HeraldRuntime
import HeraldWire

extension SMSConfiguration {
    /// Which regions may receive SMS, by ISO 3166-1 alpha-2 code (as Firebase's SMS region
    /// policy): `sms.regions.allow` (only these) or `sms.regions.deny` (every region but
    /// these), never both; neither: every region. A number's region is libphonenumber's, so
    /// `JM` (+1 876) is told apart from `US` (+1 201).
    public struct RegionPolicy: Sendable, Equatable {
        public enum Mode: String, Sendable, CaseIterable {
            case allow, deny
        }
        public var mode: Mode = .deny
        public var regions: Set<String> = []

        public init(mode: Mode = .deny, regions: Set<String> = []) {
            self.mode = mode
            self.regions = regions
        }

        public func permits(_ region: String) -> Bool {
            regions.contains(region) == (mode == .allow)
        }

        /// What it means, for `heraldctl config check`.
        public var summary: String {
            switch (mode, regions.isEmpty) {
            case (.deny, true): "every region"
            case (.deny, false): "every region but \(regions.sorted().joined(separator: ", "))"
            case (.allow, true): "no region (the allow list is empty)"
            case (.allow, false): "only \(regions.sorted().joined(separator: ", "))"
            }
        }
    }

    /// SMS per region per hour and per day (`sms.regions.caps`): a region's own caps, else
    /// `default`'s; nil is no cap. Counted with the other limits (scopes `region_hour`,
    /// `region_day`, the region code as key).
    public struct RegionCaps: Sendable, Equatable {
        public struct Cap: Sendable, Equatable {
            public var hour: Int?
            public var day: Int?
            public init(hour: Int? = nil, day: Int? = nil) {
                self.hour = hour
                self.day = day
            }
        }
        public var defaultCap = Cap()
        public var regions: [String: Cap] = [:]

        public init(defaultCap: Cap = Cap(), regions: [String: Cap] = [:]) {
            self.defaultCap = defaultCap
            self.regions = regions
        }

        public func cap(for region: String) -> Cap { regions[region] ?? defaultCap }

        /// Adds the caps of `region` to a request's limits.
        public func add(to limits: inout RateLimits, region: String) {
            let cap = cap(for: region)
            if let hour = cap.hour { limits.add("region_hour", key: region, Limit(max: hour, windowSeconds: 3600)) }
            if let day = cap.day { limits.add("region_day", key: region, Limit(max: day, windowSeconds: 86_400)) }
        }
    }

    /// Number types SMS goes to by default: the ones a person carries. Premium-rate,
    /// shared-cost, toll-free, UAN, pager and unknown ranges are where SMS pumping earns.
    public static let defaultNumberTypes: Set<PhoneNumberType> = [.mobile, .fixedLineOrMobile]

    /// Why `info` may not receive an SMS under this configuration, nil when it may.
    public func numberRefusal(_ info: PhoneNumberInfo) -> String? {
        numberRefusal(info, channel: .sms)
    }

    /// Why `info` may not receive the code on `channel`: the region policy is every channel's;
    /// a call has number types of its own (`sms.voice.number_types.allow`: a landline takes a call).
    public func numberRefusal(_ info: PhoneNumberInfo, channel: SMSVerificationJob.Channel) -> String? {
        if !regions.permits(info.regionCode) { return "region_not_allowed:\(info.regionCode)" }
        let types = channel == .voice ? voice.numberTypes : numberTypes
        if !types.contains(info.type) { return "number_type_not_allowed:\(info.type.rawValue)" }
        return nil
    }

    static func regionPolicy(_ source: ConfigSource) throws -> RegionPolicy {
        try refuseCallingCodes(source)
        let allow = try regionList(source, "sms.regions.allow")
        let deny = try regionList(source, "sms.regions.deny")
        switch (allow, deny) {
        case (.some, .some): throw ConfigError(key: "sms.regions", reason: "set allow or deny, not both")
        case (.some(let allow), nil): return RegionPolicy(mode: .allow, regions: allow)
        case (nil, let deny): return RegionPolicy(mode: .deny, regions: deny ?? [])
        }
    }

    static func numberTypes(_ source: ConfigSource) throws -> Set<PhoneNumberType> {
        let key = "sms.number_types.allow"
        let names = try source.stringList(key, default: defaultNumberTypes.map(\.rawValue))
        return Set(try names.enumerated().map { index, name in
            guard let type = PhoneNumberType(rawValue: name) else {
                throw ConfigError(key: "\(key)[\(index)]", reason: "'\(name)' is not a number type; one of \(PhoneNumberType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return type
        })
    }

    static func regionCaps(_ source: ConfigSource) throws -> RegionCaps {
        let prefix = "sms.regions.caps"
        var caps = RegionCaps()
        // The regions named in the file; each cap is then read through the typed accessor
        // (range checked, HERALD_SMS_REGIONS_CAPS_JM_HOUR overrides it).
        let named = Set(source.map(prefix).keys.compactMap { $0.split(separator: ".").first.map(String.init) })
        for name in named.union(["default"]).sorted() {
            guard name == "default" || PhoneNumberClassifier.isSupportedRegion(name) else {
                throw ConfigError(key: "\(prefix).\(name)", reason: "'\(name)' is not a region code libphonenumber knows (ISO 3166-1 alpha-2, upper case)")
            }
            var cap = RegionCaps.Cap()
            for (window, keyPath) in [("hour", \RegionCaps.Cap.hour), ("day", \RegionCaps.Cap.day)] {
                let key = "\(prefix).\(name).\(window)"
                let value = try source.int(key, default: -1)
                guard value != -1 else { continue }
                guard (0...100_000_000).contains(value) else {
                    throw ConfigError(key: key, reason: "must be between 0 and 100000000, got \(value)")
                }
                cap[keyPath: keyPath] = value
            }
            if name == "default" { caps.defaultCap = cap } else { caps.regions[name] = cap }
        }
        return caps
    }

    /// A list of region codes, nil when the key is absent; each code checked against the library.
    private static func regionList(_ source: ConfigSource, _ key: String) throws -> Set<String>? {
        let absent = "\u{0}"
        let codes = try source.stringList(key, default: [absent])
        guard codes != [absent] else { return nil }
        return Set(try codes.enumerated().map { index, code in
            guard PhoneNumberClassifier.isSupportedRegion(code) else {
                throw ConfigError(key: "\(key)[\(index)]", reason: "'\(code)' is not a region code libphonenumber knows (ISO 3166-1 alpha-2, upper case, as US, GB, JM)")
            }
            return code
        })
    }

    /// `sms.regions.mode` and `sms.regions.calling_codes` (before region codes): refused with
    /// the regions each listed calling code stands for, so the operator can choose among them.
    private static func refuseCallingCodes(_ source: ConfigSource) throws {
        let absent = "\u{0}"
        let key = "sms.regions.calling_codes"
        // As the old key was read: a list of numbers ([1, 44]) or of strings ("+1,44").
        let codes = try (try? source.stringList(key, default: [absent])) ?? source.intList(key, default: []).map(String.init)
        let mode = try source.string("sms.regions.mode", default: "")
        guard codes != [absent] || !mode.isEmpty else { return }
        let listed = codes == [absent] ? [] : codes
        let mapping = listed.map { code -> String in
            let digits = code.hasPrefix("+") ? String(code.dropFirst()) : code
            let regions = Int(digits).map(PhoneNumberClassifier.regions(ofCallingCode:)) ?? []
            return "+\(digits) = \(regions.isEmpty ? "no region" : regions.joined(separator: " "))"
        }
        let target = mode == "allow" ? "sms.regions.allow" : "sms.regions.deny"
        throw ConfigError(
            key: codes == [absent] ? "sms.regions.mode" : "sms.regions.calling_codes",
            reason: "calling codes are replaced by ISO 3166 region codes: list regions in \(target) instead of sms.regions.mode and calling_codes"
                + (mapping.isEmpty ? "" : " (\(mapping.joined(separator: "; ")))") + "; docs/sms.md shows the mapping")
    }
}

extension SMSConfiguration {
    /// The region, type and cap policy as `heraldctl config check` prints it: the keys, and
    /// `sms.policy.*` lines that say what they mean together.
    public var numberPolicyValues: [String: Any] {
        var values: [String: Any] = [
            "sms.regions.\(regions.mode.rawValue)": regions.regions.sorted(),
            "sms.number_types.allow": numberTypes.map(\.rawValue).sorted(),
            "sms.policy.regions": regions.summary,
            "sms.policy.number_types_refused": PhoneNumberType.allCases.filter { !numberTypes.contains($0) }.map(\.rawValue),
            "sms.policy.phone_metadata": PhoneNumberClassifier.libraryFile.map { "libphonenumber \($0)" } ?? "libphonenumber (file unknown)",
        ]
        func text(_ cap: RegionCaps.Cap) -> String {
            [cap.hour.map { "\($0)/hour" }, cap.day.map { "\($0)/day" }].compactMap { $0 }.joined(separator: ", ")
        }
        values["sms.policy.region_caps"] = ([("default", regionCaps.defaultCap)] + regionCaps.regions.sorted { $0.key < $1.key })
            .map { name, cap in "\(name): \(cap.hour == nil && cap.day == nil ? "no cap" : text(cap))" }
        for (name, cap) in [("default", regionCaps.defaultCap)] + Array(regionCaps.regions) {
            if let hour = cap.hour { values["sms.regions.caps.\(name).hour"] = hour }
            if let day = cap.day { values["sms.regions.caps.\(name).day"] = day }
        }
        return values
    }
}
