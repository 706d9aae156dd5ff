import Foundation

/// A message as the test SMTP server (`scripts/smtp-server.py`) stored it in its maildir:
/// the envelope recipient it adds as the first header, the headers, and the decoded text
/// and HTML parts of Herald's multipart/alternative mail. Read by the tests and the chaos
/// harness.
public struct MaildirMessage: Sendable {
    public var envelopeTo: String
    public var headers: [(String, String)]
    public var text: String
    public var html: String
    public var contentType: String

    public init(envelopeTo: String, headers: [(String, String)], text: String, html: String, contentType: String) {
        self.envelopeTo = envelopeTo
        self.headers = headers
        self.text = text
        self.html = html
        self.contentType = contentType
    }

    public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

    /// The subject with RFC 2047 words decoded.
    public var subject: String { Self.decodeWords(header("Subject") ?? "") }

    /// The first https link of the plain text.
    public var link: URLComponents? {
        guard let start = text.range(of: "https://") else { return nil }
        let url = text[start.lowerBound...].prefix { !$0.isWhitespace }
        return URLComponents(string: String(url))
    }

    public func query(_ name: String) -> String? { link?.queryItems?.first { $0.name == name }?.value }

    static func decodeWords(_ value: String) -> String {
        var out = ""
        for word in value.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }) {
            if word.hasPrefix("=?UTF-8?B?"), word.hasSuffix("?="), let data = Data(base64Encoded: String(word.dropFirst(10).dropLast(2))) {
                out += String(decoding: data, as: UTF8.self)
            } else {
                out += (out.isEmpty ? "" : " ") + word
            }
        }
        return out
    }

    /// The envelope recipient of a stored message, from its first line, without parsing the rest.
    public static func envelopeRecipient(_ raw: String) -> String? {
        let prefix = "X-Herald-Envelope-To: "
        guard raw.hasPrefix(prefix) else { return nil }
        return String(raw.dropFirst(prefix.count).prefix { !$0.isNewline })
    }

    public static func parse(_ raw: String) -> MaildirMessage? {
        let text = raw.replacingOccurrences(of: "\r\n", with: "\n")
        guard let split = text.range(of: "\n\n") else { return nil }
        var headers: [(String, String)] = []
        for line in text[..<split.lowerBound].split(separator: "\n") {
            if line.first == " " || line.first == "\t", !headers.isEmpty {
                headers[headers.count - 1].1 += " " + line.trimmingCharacters(in: .whitespaces)
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        let contentType = headers.first { $0.0.lowercased() == "content-type" }?.1 ?? ""
        guard let boundaryRange = contentType.range(of: "boundary=\"") else { return nil }
        let boundary = contentType[boundaryRange.upperBound...].prefix { $0 != "\"" }
        var plain = "", html = ""
        for part in text[split.upperBound...].components(separatedBy: "--\(boundary)") {
            guard let partSplit = part.range(of: "\n\n") else { continue }
            let partHeaders = part[..<partSplit.lowerBound].lowercased()
            let body = part[partSplit.upperBound...].split(separator: "\n").joined()
            guard partHeaders.contains("base64"), let data = Data(base64Encoded: body) else { continue }
            let decoded = String(decoding: data, as: UTF8.self)
            if partHeaders.contains("text/plain") { plain = decoded }
            if partHeaders.contains("text/html") { html = decoded }
        }
        let to = headers.first?.1 ?? ""
        return MaildirMessage(envelopeTo: to, headers: headers, text: plain, html: html, contentType: contentType)
    }

    /// The files of a maildir's `new/` folder, oldest first.
    public static func files(in maildir: String) -> [String] {
        let directory = maildir + "/new"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        // Each name's place is read once, not at every comparison.
        return names.map { (order($0), $0) }.sorted { a, b in
            a.0 == b.0 ? a.1 < b.1 : a.0.lexicographicallyPrecedes(b.0)
        }.map { directory + "/" + $0.1 }
    }

    /// Where a name of Python's `mailbox.Maildir` (`<seconds>.M<microseconds>P<pid>Q<count>.<host>`)
    /// falls in time. Its microseconds are not zero-padded, so names sorted as text put
    /// `M100000` before `M99999` within one second (two reset links of one test came out swapped).
    static func order(_ name: String) -> [Int] {
        let parts = name.split(separator: ".", maxSplits: 2)
        guard parts.count >= 2, let seconds = Int(parts[0]), parts[1].first == "M" else { return [] }
        let unique = parts[1].dropFirst()
        let micro = Int(unique.prefix { $0.isNumber }) ?? 0
        let count = unique.split(separator: "Q").last.flatMap { Int($0) } ?? 0
        return [seconds, micro, count]
    }
}
