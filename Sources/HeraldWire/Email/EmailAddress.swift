import Foundation
import HeraldRuntime

/// Email address helpers: the normal form codes are bound to, and the mailboxes of the
/// configured sender and reply-to.
public enum EmailAddress {
    /// The form a code is stored and compared under: trimmed, Unicode NFC, the domain
    /// lower-cased (domains are case-insensitive; the local part is the mailbox owner's and
    /// kept as given, as RFC 5321 says).
    public static func normalize(_ address: String) -> String {
        let trimmed = address.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard let at = trimmed.lastIndex(of: "@") else { return trimmed }
        return String(trimmed[..<at]) + "@" + trimmed[trimmed.index(after: at)...].lowercased()
    }

    /// `Name <local@domain>` or `local@domain` → (display name, address); nil when it is
    /// neither, or carries a line break (header injection).
    public static func mailbox(_ text: String) -> (name: String, address: String)? {
        guard !text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var name = "", address = trimmed
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            name = trimmed[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
        }
        do {
            try WireRules.email(address, field: "address")
        } catch {
            return nil
        }
        return (name, address)
    }

    /// The domain of an address (after the last `@`), lower-cased.
    public static func domain(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@") else { return "" }
        return address[address.index(after: at)...].lowercased()
    }
}
