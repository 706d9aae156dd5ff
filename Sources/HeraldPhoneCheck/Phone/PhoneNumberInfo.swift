import HeraldWire

/// A valid phone number as the telephone network reads it: its region (ISO 3166-1 alpha-2,
/// North American area codes resolved: +1 876 is `JM`) and its type of line.
public struct PhoneNumberInfo: Sendable, Hashable, CustomStringConvertible {
    public let number: PhoneNumber
    public let countryCode: Int
    /// `US`, `JM`, `GB`…; `001` for a non-geographic range (global services such as +800).
    public let regionCode: String
    public let type: PhoneNumberType

    public init(number: PhoneNumber, countryCode: Int, regionCode: String, type: PhoneNumberType) {
        self.number = number
        self.countryCode = countryCode
        self.regionCode = regionCode
        self.type = type
    }

    public var e164: String { number.e164 }

    public var description: String { "\(number) (\(regionCode), \(type.rawValue))" }
}
