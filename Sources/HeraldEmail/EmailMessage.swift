import Foundation
#if canImport(Glibc)
import Glibc
import HeraldRuntime
import HeraldWire
#endif

/// One email to hand to a provider: addresses, subject and both bodies. ``mime()`` makes
/// the RFC 5322 message: multipart/alternative (plain text, then HTML), UTF-8, base64
/// bodies, RFC 2047 encoded subject and display names, `Message-ID` and `Date`.
public struct EmailMessage: Sendable {
    public var from: String
    public var replyTo: String?
    public var to: String
    public var subject: String
    /// The bodies carry the link: secrets, never logged.
    public var text: Secret
    public var html: Secret
    /// `<…@sender-domain>`, unique per message.
    public var messageID: String
    public var date: Date
    /// The job's request id and message id, for the providers' records.
    public var requestID: String
    public var jobMessageID: String
    /// The mode (or `no_account`, or `code`), for the dev outbox.
    public var kind: String
    /// The text with its secret masked, when the outbox's own masking (of `oobCode=`) cannot
    /// find it: a one-time code email's.
    public var maskedText: String?
    /// The AMQP type of the job that sent it, for the dev outbox.
    public var jobType = EmailActionJob.typeName

    public init(from: String, replyTo: String?, to: String, subject: String, text: Secret, html: Secret,
                requestID: String, jobMessageID: String, kind: String, date: Date = Date()) {
        self.from = from
        self.replyTo = replyTo
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.date = date
        self.requestID = requestID
        self.jobMessageID = jobMessageID
        self.kind = kind
        let domain = EmailAddress.mailbox(from).map { EmailAddress.domain($0.address) } ?? "localhost"
        self.messageID = "<\(SecretGenerator.token(bytes: 16).revealed)@\(domain)>"
    }

    /// The envelope sender (`MAIL FROM`).
    public var envelopeFrom: String { EmailAddress.mailbox(from)?.address ?? from }

    /// The whole message, lines ending in CRLF (not dot-stuffed: that is SMTP's job).
    public func mime() -> Secret {
        let boundary = "=_herald_" + SecretGenerator.token(bytes: 16).revealed
        var lines: [String] = [
            "From: \(Self.encodeMailbox(from))",
            "To: \(to)",
        ]
        if let replyTo, !replyTo.isEmpty { lines.append("Reply-To: \(Self.encodeMailbox(replyTo))") }
        lines += [
            "Subject: \(Self.encodeHeader(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: \(messageID)",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        lines += Self.base64Lines(text.revealed)
        lines += ["--\(boundary)", "Content-Type: text/html; charset=utf-8", "Content-Transfer-Encoding: base64", ""]
        lines += Self.base64Lines(html.revealed)
        lines += ["--\(boundary)--", ""]
        return Secret(lines.joined(separator: "\r\n"))
    }

    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var out: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            out.append(String(encoded[index..<end]))
            index = end
        }
        return out
    }

    /// ASCII stays as is; anything else becomes RFC 2047 `=?UTF-8?B?…?=` words of at most
    /// 75 characters, never splitting a character.
    static func encodeHeader(_ value: String) -> String {
        let clean = oneLine(value)
        if clean.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) && !clean.contains("=?") { return clean }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in clean {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// CR and LF (header injection) become spaces, scalar by scalar ("\r\n" is one Character).
    static func oneLine(_ value: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: value.unicodeScalars.map { $0 == "\r" || $0 == "\n" ? " " : $0 })
        return String(scalars)
    }

    /// `Name <address>` with the name encoded (or quoted) as needed.
    static func encodeMailbox(_ mailbox: String) -> String {
        guard let (name, address) = EmailAddress.mailbox(mailbox) else { return mailbox }
        if name.isEmpty { return address }
        let ascii = name.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        if ascii {
            let quoted = name.reduce(into: "") { out, character in
                if character == "\\" || character == "\"" { out.append("\\") }
                out.append(character)
            }
            return "\"\(quoted)\" <\(address)>"
        }
        return "\(encodeHeader(name)) <\(address)>"
    }

    static func rfc5322Date(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return String(format: "%@, %02d %@ %04d %02d:%02d:%02d +0000", days[Int(parts.tm_wday)], parts.tm_mday,
                      months[Int(parts.tm_mon)], Int(parts.tm_year) + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
