import Foundation
import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// `/v1`: the types and routes swift-openapi-generator makes from docs/openapi.yaml
/// (`Generated/`, scripts/generate-openapi.sh), answered by each family's handlers
/// (`SMSRoutes`, `EmailRoutes`, `PushRoutes`, `AppleRoutes`, `AccountRoutes`). What a handler
/// knows of its request besides the generated input is in ``V1Request``.
struct V1API: APIProtocol {
    let dependencies: APIDependencies

    /// Registers every generated route on its family's group (``V1Transport``).
    static func register(_ dependencies: APIDependencies, families: [String: RouterGroup<APIContext>]) throws {
        // Answers as `/v1` always wrote them: keys sorted, compact, slashes as they are.
        let configuration = Configuration(dateTranscoder: V1Time(), jsonEncodingOptions: [.sortedKeys, .withoutEscapingSlashes])
        try V1API(dependencies: dependencies).registerHandlers(on: V1Transport(families: families), configuration: configuration)
    }

    /// The request's context; every generated route runs inside ``V1Request/Scope``.
    var context: APIContext {
        get throws { try V1Request.get().context }
    }

    /// The request's header fields as sent (``V1Request``).
    var headers: HTTPFields {
        get throws { try V1Request.get().headers }
    }
}

/// `/v1`'s times: read as RFC 3339 (``RFC3339Time``: fractional seconds and offsets taken, every
/// field in its range), written as whole seconds in UTC (`2026-01-02T03:04:05Z`), as before.
struct V1Time: DateTranscoder {
    func encode(_ date: Date) throws -> String { JSONResponse.timestamp(date) }

    /// A JSON body Herald wrote itself (a record's state) read into a generated type.
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            return try V1Time().decode(try container.decode(String.self))
        }
        return decoder
    }()

    func decode(_ text: String) throws -> Date {
        guard let date = RFC3339Time.parse(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: V1DecodingFailure.notATime))
        }
        return date
    }
}
