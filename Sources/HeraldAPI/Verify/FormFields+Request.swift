import Hummingbird

extension FormFields {
    /// The parameters of a POST's form-encoded body (at most `limit` bytes: more is 413).
    static func body(_ request: Request, limit: Int, accepted: Set<String>, ignored: Set<String> = []) async throws -> FormFields {
        var request = request
        let buffer = try await request.collectBody(upTo: limit)
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw APIFailure.invalid(field: "body", reason: "not UTF-8")
        }
        return try FormFields(text, accepted: accepted, ignored: ignored)
    }

    /// The parameters of a GET's query.
    static func query(_ request: Request, accepted: Set<String>) throws -> FormFields {
        try FormFields(request.uri.query ?? "", accepted: accepted, ignored: [])
    }
}
