import Foundation

// libFuzzer target: email addresses as jobs carry them (the wire rule), their normal form and
// the mailbox parser of the sender and reply-to headers. Checked besides "no crash": an
// accepted address has one '@' with something on both sides and no control character or
// space; normalizing is idempotent and keeps an accepted address accepted; a mailbox never
// carries a line break (header injection) and its address passes the wire rule.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEmailAddress(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if (try? WireRules.email(text, field: "email")) != nil {
        precondition(text.contains("@") && !text.hasPrefix("@") && !text.hasSuffix("@"), "accepted without a local part and a domain")
        precondition(!text.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F }, "accepted with a control character or space")
        let normal = EmailAddress.normalize(text)
        precondition(EmailAddress.normalize(normal) == normal, "normalize is not idempotent")
        precondition(EmailAddress.domain(normal) == EmailAddress.domain(normal).lowercased(), "domain not lower-cased")
    }
    if let mailbox = EmailAddress.mailbox(text) {
        precondition(!text.contains("\r") && !text.contains("\n"), "a mailbox with a line break")
        precondition((try? WireRules.email(mailbox.address, field: "address")) != nil, "a mailbox whose address fails the wire rule")
    }
    return 0
}
