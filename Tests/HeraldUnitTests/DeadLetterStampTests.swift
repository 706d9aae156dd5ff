import AMQP
import Foundation
import Testing
@testable import HeraldRuntime

/// The `x-herald-dead-letter` table: what a dead letter says about itself, written as one
/// header and read back the same, and letters of the older one-header-per-field form read too.
@Suite struct DeadLetterStampTests {
    let stamp = DeadLetterStamp(reason: "field 'phone_number' must be E.164", category: "invalid", queue: "herald.sms",
                                routingKey: "sms.verification", attempts: 0, at: Date(timeIntervalSince1970: 1_790_000_000))

    static func table(_ value: AMQPFieldValue) -> [String: AMQPFieldValue]? {
        if case .table(let fields) = value { return fields }
        return nil
    }

    @Test func theTableReadsBackAsTheStamp() throws {
        let headers = ["x-correlation": AMQPFieldValue.string("c"), DeadLetterStamp.header: stamp.fieldValue]
        #expect(DeadLetterStamp(headers: headers) == stamp)
        let fields = try #require(Self.table(stamp.fieldValue))
        #expect(Set(fields.keys) == ["reason", "category", "queue", "routing-key", "attempts", "at"])
    }

    @Test func lettersOfTheOlderFlatHeadersAreRead() {
        let headers: [String: AMQPFieldValue] = [
            "x-herald-reason": .string(stamp.reason), "x-herald-category": .string("invalid"), "x-herald-queue": .string("herald.sms"),
            "x-herald-routing-key": .string("sms.verification"), "x-herald-attempts": .int(0), "x-herald-dead-lettered-at": .timestamp(stamp.at),
        ]
        #expect(DeadLetterStamp(headers: headers) == stamp)
    }

    /// The reason a letter gives: the stamp's, else a lone `x-herald-reason`, else none.
    @Test func theReasonComesFromTheStampOrALoneReasonHeader() {
        #expect(DeadLetterStamp.reason(in: [DeadLetterStamp.header: stamp.fieldValue, "x-herald-reason": .string("other")]) == stamp.reason)
        #expect(DeadLetterStamp.reason(in: ["x-herald-reason": .string("malformed")]) == "malformed")
        #expect(DeadLetterStamp.reason(in: ["x-first-death-reason": .string("delivery_limit")]) == nil)
    }

    /// The broker's own dead letters (delivery limit) and tables missing a field or with a
    /// field of the wrong type are not Herald's stamp.
    @Test func anythingElseIsNoStamp() throws {
        #expect(DeadLetterStamp(headers: ["x-first-death-reason": .string("delivery_limit")]) == nil)
        var fields = try #require(Self.table(stamp.fieldValue))
        fields["attempts"] = .string("0")
        #expect(DeadLetterStamp(headers: [DeadLetterStamp.header: .table(fields)]) == nil)
        fields["attempts"] = nil
        #expect(DeadLetterStamp(headers: [DeadLetterStamp.header: .table(fields)]) == nil)
        #expect(DeadLetterStamp(headers: [DeadLetterStamp.header: .string("invalid")]) == nil)
    }
}
