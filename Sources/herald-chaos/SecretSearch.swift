/// Which of the secrets sent occur anywhere in the texts searched (logs, metrics, a dump):
/// one pass over the bytes per distinct secret length with a rolling hash of every window,
/// so every secret of a full run is searched in tens of MiB, inside longer tokens too.
enum SecretSearch {
    @Sendable static func found(_ secrets: Set<String>, in texts: [String]) -> Set<String> {
        var found = Set<String>()
        for (length, needles) in Dictionary(grouping: secrets.map { Array($0.utf8) }, by: \.count) where length > 0 {
            let table = Dictionary(grouping: needles, by: { hash($0[...]) })
            // A bit per hash's low 20 bits: most windows are turned away without a lookup.
            var filter = [UInt64](repeating: 0, count: 1 << 14)
            for key in table.keys { filter[Int(key & 0xFFFFF) >> 6] |= 1 << (key & 63) }
            var power: UInt64 = 1
            for _ in 1..<length { power &*= base }
            for text in texts {
                let bytes = Array(text.utf8)
                guard bytes.count >= length else { continue }
                var h = hash(bytes[0..<length])
                var i = 0
                while true {
                    if filter[Int(h & 0xFFFFF) >> 6] & (1 << (h & 63)) != 0, let candidates = table[h] {
                        for candidate in candidates where bytes[i..<(i + length)].elementsEqual(candidate) {
                            found.insert(String(decoding: candidate, as: UTF8.self))
                        }
                    }
                    guard i + length < bytes.count else { break }
                    h = (h &- UInt64(bytes[i]) &* power) &* base &+ UInt64(bytes[i + length])
                    i += 1
                }
            }
        }
        return found
    }

    private static let base: UInt64 = 1_000_003

    private static func hash(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 &* base &+ UInt64($1) }
    }
}
