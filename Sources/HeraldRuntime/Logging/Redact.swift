/// Masks personal data for logs: phone numbers keep `+` and two digits and the last two,
/// emails their first letter and domain. Secrets are never passed here: they are not logged.
public enum Redact {
    /// `+4915123456789` → `+49*********89`
    public static func phone(_ number: String) -> String {
        let scalars = Array(number.unicodeScalars)
        guard scalars.count > 6 else { return String(repeating: "*", count: scalars.count) }
        let head = String(String.UnicodeScalarView(scalars.prefix(3)))
        let tail = String(String.UnicodeScalarView(scalars.suffix(2)))
        return head + String(repeating: "*", count: scalars.count - 5) + tail
    }

    /// `alice@example.com` → `a***@example.com`
    public static func email(_ address: String) -> String {
        guard let at = address.lastIndex(of: "@"), at > address.startIndex else { return "***" }
        return String(address[address.startIndex]) + "***" + String(address[at...])
    }

    /// A last line of defence in the log handler: masks anything in free text that looks
    /// like an E.164 number or an email address, in case a caller forgot to.
    public static func scrub(_ text: String) -> String {
        // A byte scan: `String.contains("+")` resolves to Foundation's (CFStringFind), which
        // cost every log line more than the rest of the check.
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "@") }) else { return text }
        var out = ""
        var chars = Array(text)
        var i = 0
        while i < chars.count {
            if chars[i] == "+" {
                var j = i + 1
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { j += 1 }
                if j - i - 1 >= 7 {
                    out += phone(String(chars[i..<j]))
                    i = j
                    continue
                }
            }
            if chars[i] == "@" {
                var start = out.endIndex
                while start > out.startIndex, isEmailChar(out[out.index(before: start)]) { start = out.index(before: start) }
                var end = i + 1
                while end < chars.count, isEmailChar(chars[end]) { end += 1 }
                if start < out.endIndex, end > i + 1, chars[(i + 1)..<end].contains(".") {
                    let local = out[start...]
                    out.removeSubrange(start...)
                    out += String(local.first!) + "***@" + String(chars[(i + 1)..<end])
                    i = end
                    continue
                }
            }
            out.append(chars[i])
            i += 1
        }
        chars.removeAll()
        return out
    }

    private static func isEmailChar(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || "._%+-".contains(c))
    }
}
