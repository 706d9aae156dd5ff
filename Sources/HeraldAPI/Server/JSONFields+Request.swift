import Foundation
import Hummingbird

extension JSONFields {
    /// Reads the request body (at most `limit` bytes: more is 413) as a JSON object whose keys are all in `allowed`.
    static func read(_ request: Request, limit: Int, allowed: Set<String>) async throws -> JSONFields {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        return try parse(Data(buffer.readableBytesView), allowed: allowed)
    }
}
