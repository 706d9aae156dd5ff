import HTTPTypes
import Hummingbird
import OpenAPIHummingbird
import OpenAPIRuntime

/// Hands each generated `/v1` route to its family's router group (`/v1/sms/verifications` to the
/// `sms` group as `verifications`), so that the route sits behind that family's key scope and
/// ``V1Request``'s scope, as the hand-written routes did. swift-openapi-hummingbird registers it there.
struct V1Transport: ServerTransport {
    let families: [String: RouterGroup<APIContext>]

    enum Failure: Error, CustomStringConvertible {
        case noFamily(path: String)
        var description: String {
            switch self {
            case .noFamily(let path): "no /v1 route family takes \(path) (docs/openapi.yaml's tags and APIRouter's groups differ)"
            }
        }
    }

    func register(
        _ handler: @escaping @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?),
        method: HTTPRequest.Method,
        path: String
    ) throws {
        let parts = path.split(separator: "/", maxSplits: 2)
        guard parts.count == 3, parts[0] == "v1", let group = families[String(parts[1])] else { throw Failure.noFamily(path: path) }
        group.register(handler, method: method, path: String(parts[2]))
    }
}
