import Foundation
import Testing
@testable import HeraldRuntime

/// The ids of claims, events and webhook messages: version 4 UUIDs from a pool of the
/// kernel's random bytes.
@Suite struct RandomIDTests {
    @Test func aUUIDIsLowerCaseVersion4WithItsVariant() throws {
        for _ in 0..<1_000 {
            let id = RandomID.uuid()
            #expect(id.count == 36)
            #expect(id.allSatisfy { "0123456789abcdef-".contains($0) }, "\(id)")
            let groups = id.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
            #expect(groups == [8, 4, 4, 4, 12], "\(id)")
            let parsed = try #require(UUID(uuidString: id))
            #expect(parsed.uuidString.lowercased() == id)
            #expect(parsed.uuid.6 >> 4 == 4, "version 4")
            #expect(parsed.uuid.8 >> 6 == 0b10, "the RFC 9562 variant")
        }
    }

    @Test func theHexFormIs32DigitsWithTheVersionAndVariant() {
        for _ in 0..<1_000 {
            let hex = Array(RandomID.hex())
            #expect(hex.count == 32)
            #expect(hex.allSatisfy { "0123456789abcdef".contains($0) }, "\(String(hex))")
            #expect(hex[12] == "4", "version 4")
            #expect("89ab".contains(hex[16]), "the RFC 9562 variant")
        }
    }

    /// Many times the pool's 256 ids, from concurrent tasks: none repeats, and every hex digit
    /// of the random positions turns up (the bytes are used, not the zeros they start as).
    @Test func concurrentIDsAreDistinct() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 { group.addTask { (0..<5_000).map { _ in RandomID.uuid() } } }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(ids.count == 40_000)
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids.map(\.first!)).count == 16)
    }
}
