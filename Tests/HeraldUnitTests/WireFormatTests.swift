import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// What the wire contract promises of reasons and event timestamps.
@Suite struct WireFormatTests {
    private struct Stamped: Encodable { var at: Date }

    @Test func eventTimestampsHaveMilliseconds() throws {
        #expect(Date(timeIntervalSince1970: 1_790_000_000.25).iso8601Milliseconds == "2026-09-21T14:13:20.250Z")
        let event = OutgoingEvent(name: "x.sent", payload: Stamped(at: Date(timeIntervalSince1970: 1_790_000_000)),
                                  occurredAt: Date(timeIntervalSince1970: 1_790_000_001.5))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.body)) as? [String: Any])
        #expect(object["occurred_at"] as? String == "2026-09-21T14:13:21.500Z")
        #expect(object["at"] as? String == "2026-09-21T14:13:20.000Z", "a payload's dates too")
    }

    @Test func theContentTypeReasonNamesThePropertyNotItsValue() {
        var properties = JobEnvelope(messageID: "m-1", typeName: SMSVerificationJob.typeName).properties()
        properties.contentType = "text/x-secret-value"
        let decoder = JobDecoder<SMSVerificationJob>(maxBytes: 4096)
        #expect(throws: JobValidationError("content_type must be application/json")) {
            try decoder.envelope(bodyCount: 10, properties: properties)
        }
    }
}
