import CPhoneNumber
import HeraldRuntime
import HeraldWire

/// Reads phone numbers with libphonenumber (Google's reference library, the metadata the
/// telephone-facing industry uses; Debian's `libphonenumber-dev`, see docs/sms.md for the
/// version and how to move to newer metadata). Thread-safe: the library's `PhoneNumberUtil`
/// is a process-wide singleton whose reads need no lock.
public enum PhoneNumberClassifier {
    /// `number` with its region and type, or why it is no number in use (the reason reads
    /// after `phone_number`, as the job's field).
    public static func classify(_ number: PhoneNumber) throws(JobValidationError) -> PhoneNumberInfo {
        var info = herald_phone_info()
        herald_phone_classify(number.e164, &info)
        let region = withUnsafeBytes(of: info.region) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let calling = "+\(info.country_code)"
        switch info.form {
        case HERALD_PHONE_NOT_A_NUMBER: throw JobValidationError("is not a phone number libphonenumber can read")
        case HERALD_PHONE_INVALID_COUNTRY_CODE: throw JobValidationError("starts with no assigned country calling code")
        case HERALD_PHONE_TOO_SHORT: throw JobValidationError("is too short for \(calling) (\(info.national_length) digits after it)")
        case HERALD_PHONE_TOO_LONG: throw JobValidationError("is too long for \(calling) (\(info.national_length) digits after it)")
        case HERALD_PHONE_INVALID_LENGTH: throw JobValidationError("has \(info.national_length) digits after \(calling), a length not in use there")
        case HERALD_PHONE_LOCAL_ONLY: throw JobValidationError("lacks its area code: only dialable locally")
        default: break
        }
        guard info.valid != 0 else {
            throw JobValidationError("is in no assigned range of \(calling)\(region == "ZZ" ? "" : " (\(region))")")
        }
        return PhoneNumberInfo(number: number, countryCode: Int(info.country_code), regionCode: region, type: type(info.type))
    }

    /// The region of an E.164 number for a metric's label: `ZZ` (libphonenumber's unknown region)
    /// for one it cannot read (a fictional test number).
    public static func metricRegion(of e164: String) -> String {
        (try? classify(PhoneNumber(e164)))?.regionCode ?? "ZZ"
    }

    /// Whether `code` is an ISO 3166-1 alpha-2 region the library has numbering metadata for.
    public static func isSupportedRegion(_ code: String) -> Bool {
        code.utf8.count == 2 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            && herald_phone_is_supported_region(code) != 0
    }

    /// The country calling code of a supported region (`JM` → 1), nil for another.
    public static func callingCode(ofRegion code: String) -> Int? {
        guard isSupportedRegion(code) else { return nil }
        let calling = herald_phone_country_code_for_region(code)
        return calling > 0 ? Int(calling) : nil
    }

    /// The regions that share a country calling code (1 → US, AG, AI, …, JM, …), main region first.
    public static func regions(ofCallingCode code: Int) -> [String] {
        var buffer = [CChar](repeating: 0, count: 1024)
        guard herald_phone_regions_for_calling_code(Int32(code), &buffer, Int32(buffer.count)) != 0 else { return [] }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: ",").map(String.init)
    }

    /// The loaded library's file, links resolved (`…/libphonenumber.so.8.12`: metadata 8.12).
    public static var libraryFile: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard herald_phone_library_file(&buffer, Int32(buffer.count)) != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func type(_ type: herald_phone_type) -> PhoneNumberType {
        switch type {
        case HERALD_PHONE_TYPE_FIXED_LINE: .fixedLine
        case HERALD_PHONE_TYPE_MOBILE: .mobile
        case HERALD_PHONE_TYPE_FIXED_LINE_OR_MOBILE: .fixedLineOrMobile
        case HERALD_PHONE_TYPE_TOLL_FREE: .tollFree
        case HERALD_PHONE_TYPE_PREMIUM_RATE: .premiumRate
        case HERALD_PHONE_TYPE_SHARED_COST: .sharedCost
        case HERALD_PHONE_TYPE_VOIP: .voip
        case HERALD_PHONE_TYPE_PERSONAL_NUMBER: .personalNumber
        case HERALD_PHONE_TYPE_PAGER: .pager
        case HERALD_PHONE_TYPE_UAN: .uan
        case HERALD_PHONE_TYPE_VOICEMAIL: .voicemail
        default: .unknown
        }
    }
}
