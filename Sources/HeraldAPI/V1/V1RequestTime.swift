import Foundation

/// A time a `/v1` request gives (docs/openapi.yaml's `RequestTime`, swift-openapi-generator's
/// `typeOverrides`): read by ``RFC3339Time``, refused naming its field, as
/// ``V1DecodingFailure`` words it.
struct V1RequestTime: Codable, Hashable, Sendable {
    let date: Date

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.utf8.count <= 40, let date = RFC3339Time.parse(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: V1DecodingFailure.notATime)
        }
        self.date = date
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(JSONResponse.timestamp(date))
    }
}
