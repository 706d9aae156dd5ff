/// Format checks shared by the job payloads. Reasons name the field, never its value.
public enum WireRules {
    public static func identifier(_ value: String, field: String) throws(JobValidationError) {
        guard (1...128).contains(value.utf8.count),
              value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw JobValidationError("\(field) must be 1 to 128 printable ASCII characters without spaces")
        }
    }

    /// One `@`, a non-empty local part of at most 64 bytes, a dotted domain; at most 254 bytes.
    public static func email(_ value: String, field: String) throws(JobValidationError) {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        // No control characters (NUL, C0, DEL, C1) and no U+FFFD (bytes that were not UTF-8):
        // they would reach SMTP commands and headers (found by the email fuzzer).
        let control = value.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{FFFD}" }
        guard !control, value.utf8.count <= 254, parts.count == 2,
              (1...64).contains(parts[0].utf8.count),
              parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              !value.contains(where: { $0.isWhitespace || $0.isNewline || "<>()[],;:\\\"".contains($0) })
        else {
            throw JobValidationError("\(field) must be an email address (local@domain)")
        }
    }

    /// BCP 47-ish: letters, digits and '-' or '_', 2 to 35 characters.
    public static func locale(_ value: String, field: String) throws(JobValidationError) {
        guard (2...35).contains(value.utf8.count),
              value.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_") })
        else {
            throw JobValidationError("\(field) must be a language tag such as en or pt-BR")
        }
    }

    public static func httpURL(_ value: String, field: String) throws(JobValidationError) {
        guard value.utf8.count <= 2048, value.lowercased().hasPrefix("https://") || value.lowercased().hasPrefix("http://") else {
            throw JobValidationError("\(field) must be an http(s) URL of at most 2048 bytes")
        }
    }
}
