import HeraldRuntime

/// How a text travels as SMS: GSM 03.38 7-bit (160 septets in one segment, 153 per part
/// when concatenated) when every character is in the GSM default alphabet or its extension
/// table (which costs two septets), otherwise UCS-2 (70 UTF-16 units, 67 per part).
public struct SMSEncoding: Sendable, Equatable {
    public enum Scheme: String, Sendable { case gsm7 = "GSM-7", ucs2 = "UCS-2" }

    public var scheme: Scheme
    /// Septets (GSM-7) or UTF-16 code units (UCS-2).
    public var units: Int
    public var segments: Int

    public init(_ text: String) {
        var septets = 0
        var gsm = true
        for scalar in text.unicodeScalars {
            if Self.basic.contains(scalar) {
                septets += 1
            } else if Self.extended.contains(scalar) {
                septets += 2
            } else {
                gsm = false
                break
            }
        }
        if gsm {
            scheme = .gsm7
            units = septets
            segments = septets <= 160 ? 1 : (septets + 152) / 153
        } else {
            scheme = .ucs2
            units = text.utf16.count
            segments = units <= 70 ? 1 : (units + 66) / 67
        }
    }

    /// The GSM 03.38 default alphabet.
    static let basic: Set<Unicode.Scalar> = Set(
        "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà".unicodeScalars)
    /// The extension table, reached through the escape septet.
    static let extended: Set<Unicode.Scalar> = Set("^{}\\[~]|€\u{0C}".unicodeScalars)
}
