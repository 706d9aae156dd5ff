import Foundation
import Logging
import Testing
@testable import HeraldRuntime

@Suite struct JSONLogHandlerTests {
    /// The line as JSONSerialization reads it back.
    private func parsed(_ line: String) throws -> [String: Any] {
        #expect(line.hasSuffix("\n"))
        #expect(line.dropLast().contains("\n") == false)
        return try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func everyValueRoundTripsThroughAJSONParser() throws {
        let awkward = "quote \" backslash \\ slash / newline \n tab \t bell \u{7} nul \u{0} ünïcödé ✓"
        let line = JSONLogHandler.jsonLine(timestamp: "2026-11-24T05:00:00.123Z", level: .warning, label: "herald.sms",
                                           message: awkward, metadata: [
                                               "reason": .string(awkward),
                                               "attempt": .stringConvertible(3),
                                               "list": .array([.string("a"), .dictionary(["k": .string("v")])]),
                                           ])
        let object = try parsed(line)
        #expect(object["msg"] as? String == awkward)
        #expect(object["reason"] as? String == awkward)
        #expect(object["attempt"] as? String == "3")
        #expect(object["level"] as? String == "warning")
        #expect(object["logger"] as? String == "herald.sms")
        #expect(object["ts"] as? String == "2026-11-24T05:00:00.123Z")
        let list = try #require(object["list"] as? [Any])
        #expect(list.first as? String == "a")
        #expect((list.last as? [String: String]) == ["k": "v"])
        // Slashes and non-ASCII as they are; control characters escaped.
        #expect(line.contains("slash / newline \\n"))
        #expect(line.contains("ünïcödé ✓"))
        #expect(line.contains("\\u0007") && line.contains("\\u0000"))
    }

    @Test func keysAreSortedAndMetadataReplacesAFixedKey() throws {
        let line = JSONLogHandler.jsonLine(timestamp: "t", level: .info, label: "l", message: "m",
                                           metadata: ["zeta": .string("z"), "alpha": .string("a"), "msg": .string("from metadata")])
        #expect(line == #"{"alpha":"a","level":"info","logger":"l","msg":"from metadata","ts":"t","zeta":"z"}"# + "\n")
    }

    @Test func phonesAndAddressesAreScrubbedEverywhere() throws {
        let line = JSONLogHandler.jsonLine(timestamp: "t", level: .info, label: "l", message: "to +4915112345678",
                                           metadata: ["to": .string("alice@example.com"), "nested": .array([.string("+4915112345678")])])
        #expect(!line.contains("15112345678"))
        #expect(!line.contains("alice@"))
        #expect(line.contains("@example.com"))
        let text = JSONLogHandler.textLine(timestamp: "t", level: .info, label: "l", message: "to +4915112345678", metadata: ["to": .string("alice@example.com")])
        #expect(!text.contains("15112345678") && !text.contains("alice@"))
    }
}
