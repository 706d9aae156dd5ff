/// A `.sql` file cut into the statements PostgreSQL's extended query protocol takes one at a time.
///
/// A statement ends at a `;` outside quotes, identifiers, comments and dollar-quoted bodies
/// (`$$ … $$`, `$fn$ … $fn$`). Text that is only comments is no statement. Simpler than psql:
/// no parenthesis depth (`CREATE RULE … (a; b)`) and no `BEGIN ATOMIC` bodies, which Herald's
/// files do not use.
public enum SQLScript {
    public static func statements(_ text: String) -> [String] {
        let bytes = Array(text.utf8)
        var statements: [String] = []
        var start = 0
        var hasCode = false
        var index = 0
        func flush(upTo end: Int) {
            if hasCode, let statement = String(validating: bytes[start..<end], as: UTF8.self) {
                statements.append(statement.trimmingWhitespace())
            }
            hasCode = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                continue
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index = endOfBlockComment(bytes, from: index)
                continue
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // E'…' (backslash escapes): an E that starts a word, not the end of ELSE or of a name.
                let escapes = byte == UInt8(ascii: "'") && index > 0 && (bytes[index - 1] | 0x20) == UInt8(ascii: "e")
                    && (index < 2 || !isIdentifierByte(bytes[index - 2]))
                index = endOfQuoted(bytes, from: index, quote: byte, backslashEscapes: escapes)
                hasCode = true
                continue
            case UInt8(ascii: "$"):
                // A `$` inside a name (PostgreSQL allows a$b) starts no dollar quote.
                if index == 0 || !isIdentifierByte(bytes[index - 1]), let tag = dollarTag(bytes, at: index) {
                    index = endOfDollarQuoted(bytes, from: index + tag.count, tag: tag)
                    hasCode = true
                    continue
                }
                hasCode = true
            case UInt8(ascii: ";"):
                flush(upTo: index + 1)
                start = index + 1
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                break
            default:
                hasCode = true
            }
            index += 1
        }
        flush(upTo: bytes.count)
        return statements
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        return letter || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte >= 0x80
    }

    /// `$tag$` at `index` (the tag may be empty; it cannot start with a digit, which `$1` does).
    static func dollarTag(_ bytes: [UInt8], at index: Int) -> [UInt8]? {
        var end = index + 1
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "$") { return Array(bytes[index...end]) }
            let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") || byte == UInt8(ascii: "_") || byte >= 0x80
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard letter || (digit && end > index + 1) else { return nil }
            end += 1
        }
        return nil
    }

    static func endOfDollarQuoted(_ bytes: [UInt8], from index: Int, tag: [UInt8]) -> Int {
        var i = index
        while i + tag.count <= bytes.count {
            if bytes[i] == UInt8(ascii: "$") && Array(bytes[i..<(i + tag.count)]) == tag { return i + tag.count }
            i += 1
        }
        return bytes.count
    }

    static func endOfQuoted(_ bytes: [UInt8], from index: Int, quote: UInt8, backslashEscapes: Bool) -> Int {
        var i = index + 1
        while i < bytes.count {
            if backslashEscapes && bytes[i] == UInt8(ascii: "\\") { i += 2; continue }
            if bytes[i] == quote {
                if i + 1 < bytes.count && bytes[i + 1] == quote { i += 2; continue }
                return i + 1
            }
            i += 1
        }
        return bytes.count
    }

    /// Block comments nest in PostgreSQL.
    static func endOfBlockComment(_ bytes: [UInt8], from index: Int) -> Int {
        var depth = 0
        var i = index
        while i + 1 < bytes.count {
            if bytes[i] == UInt8(ascii: "/") && bytes[i + 1] == UInt8(ascii: "*") { depth += 1; i += 2; continue }
            if bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/") {
                depth -= 1; i += 2
                if depth == 0 { return i }
                continue
            }
            i += 1
        }
        return bytes.count
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
