import HeraldRuntime

/// A phone number in strict E.164 form: `+`, the country calling code and the national
/// significant number, digits only. The syntax of the wire; whether the number exists, its
/// region and its type are libphonenumber's to say (``PhoneNumberClassifier``).
public struct PhoneNumber: Sendable, Hashable, CustomStringConvertible {
    /// `+` and digits, as given.
    public let e164: String

    /// The shortest numbers in use have 7 digits with their calling code (Niue, Tokelau: +683 4 digits).
    public static let minimumDigits = 7
    public static let maximumDigits = 15

    public init(_ text: String) throws(JobValidationError) {
        guard text.first == "+" else { throw JobValidationError("must start with '+' and the country calling code (E.164)") }
        let digits = text.utf8.dropFirst()
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw JobValidationError("must be '+' followed by digits only (no spaces, dashes or brackets)")
        }
        guard digits.count <= Self.maximumDigits else {
            throw JobValidationError("has \(digits.count) digits; E.164 allows at most \(Self.maximumDigits)")
        }
        guard digits.count >= Self.minimumDigits else {
            throw JobValidationError("has \(digits.count) digits; numbers in use have at least \(Self.minimumDigits) with their calling code")
        }
        guard digits.first != UInt8(ascii: "0") else { throw JobValidationError("no country calling code starts with 0") }
        self.e164 = text
    }

    /// The number without its last `drop` digits (at most all but the first four): the range
    /// SMS pumping walks through.
    public func prefix(droppingLast drop: Int) -> String {
        String(e164.dropLast(max(0, min(drop, e164.utf8.count - 5))))
    }

    public var description: String { Redact.phone(e164) }
}
