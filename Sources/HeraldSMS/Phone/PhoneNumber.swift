import HeraldRuntime
/// A phone number in strict E.164 form (`+` country code, national significant number),
/// checked against the assigned country calling codes.
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// `+` and digits, as given.
    public let e164: String
    public let callingCode: CallingCode
    /// The digits after the country code.
    public let nationalNumber: Substring

    public init(_ text: String) throws(JobValidationError) {
        guard text.first == "+" else { throw JobValidationError("must start with '+' and the country calling code (E.164)") }
        let digits = text.dropFirst()
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw JobValidationError("must be '+' followed by digits only (no spaces, dashes or brackets)")
        }
        guard digits.count <= 15 else { throw JobValidationError("has \(digits.count) digits; E.164 allows at most 15") }
        guard digits.first != "0" else { throw JobValidationError("no country calling code starts with 0") }
        guard let code = CallingCodes.match(digits) else {
            throw JobValidationError("starts with no assigned country calling code")
        }
        guard code.isGeographic else {
            throw JobValidationError("country calling code +\(code.code) is a non-geographic service, which cannot receive SMS")
        }
        let national = digits.dropFirst(code.code.count)
        guard code.nationalLengths.contains(national.count) else {
            let lengths = code.nationalLengths
            let expected = lengths.count == 1 ? "\(lengths.lowerBound)" : "\(lengths.lowerBound) to \(lengths.upperBound)"
            throw JobValidationError("has \(national.count) digits after +\(code.code); numbers there have \(expected)")
        }
        if code.code == "1" {
            // NANP: area code and exchange code both start with 2-9.
            let d = Array(national.utf8)
            guard d[0] >= UInt8(ascii: "2"), d[3] >= UInt8(ascii: "2") else {
                throw JobValidationError("is not a valid North American number (area and exchange codes start with 2-9)")
            }
        }
        self.e164 = text
        self.callingCode = code
        self.nationalNumber = national
    }

    /// The number without its last `drop` digits: the range SMS pumping walks through.
    public func prefix(droppingLast drop: Int) -> String {
        String(e164.dropLast(min(drop, nationalNumber.count - 1)))
    }

    public var description: String { Redact.phone(e164) }
}
