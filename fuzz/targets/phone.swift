import Foundation

// libFuzzer target: the E.164 syntax of the wire. Checked besides "no crash": an accepted
// number is the input unchanged, '+' and 7 to 15 digits not starting with 0, parses again to
// the same value, its prefix is a prefix of it, and its description (what logs show) is masked.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPhoneNumber(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let number = try? PhoneNumber(text) else { return 0 }
    let digits = number.e164.utf8.dropFirst()
    precondition(number.e164 == text, "the number was changed")
    precondition(number.e164.first == "+" && (7...15).contains(digits.count), "not E.164: \(digits.count) digits")
    precondition(digits.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } && digits.first != 0x30, "not E.164 digits")
    for drop in 0...8 {
        let prefix = number.prefix(droppingLast: drop)
        precondition(number.e164.hasPrefix(prefix) && prefix.utf8.count >= 5, "prefix \(drop) is not a prefix of at least 4 digits")
    }
    precondition((try? PhoneNumber(number.e164)) == number, "does not parse again to the same number")
    precondition(number.description != number.e164 && number.description.count == number.e164.count, "description not masked")
    return 0
}
