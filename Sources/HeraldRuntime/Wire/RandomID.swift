import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random (version 4) UUIDs as text, from the kernel's random bytes read 4 KiB at a time.
///
/// Foundation's `UUID()` asks the kernel for each one (glibc's `arc4random_buf`, one
/// `getrandom` call). An SMS job made three: its claim token, its event's id and the webhook's
/// message id, about 4 % of the worker's CPU (docs/benchmarks-journal.md). These identify; they guard
/// nothing. Codes, link codes and other secrets come from ``SecretGenerator``.
public enum RandomID {
    /// `8-4-4-4-12` lower-case hex digits, as `UUID().uuidString.lowercased()` writes them.
    public static func uuid() -> String { text(pool.withLock { $0.take() }, dashes: true) }

    /// The same 32 hex digits without the dashes.
    public static func hex() -> String { text(pool.withLock { $0.take() }, dashes: false) }

    private static let pool = Mutex(Pool())

    /// Random bytes not handed out yet.
    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: 4096)
        var offset = 4096

        mutating func take() -> (UInt64, UInt64) {
            if offset == bytes.count {
                bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                offset = 0
            }
            defer { offset += 16 }
            return bytes.withUnsafeBytes {
                ($0.loadUnaligned(fromByteOffset: offset, as: UInt64.self), $0.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
            }
        }
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func text(_ random: (UInt64, UInt64), dashes: Bool) -> String {
        var random = random
        return withUnsafeMutableBytes(of: &random) { bytes in
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 9562 variant
            return String(unsafeUninitializedCapacity: dashes ? 36 : 32) { out in
                var at = 0
                for index in 0..<16 {
                    if dashes, index == 4 || index == 6 || index == 8 || index == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = digits[Int(bytes[index] >> 4)]
                    out[at + 1] = digits[Int(bytes[index] & 0x0F)]
                    at += 2
                }
                return at
            }
        }
    }
}
