import HeraldAPIStore
import HeraldRuntime
import HTTPTypes
import Hummingbird
import NIOCore

/// What herald-api knows of one request besides the request itself: the peer's address, and,
/// once the authenticator has run, the API key and the client's IP (``ClientAddress``).
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let peer: SocketAddress?
    public var key: APIKey?
    public var clientIP: ClientIP?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress
    }

    /// The key the authenticator accepted (every route behind it has one).
    func requireKey() throws -> APIKey {
        guard let key else { throw APIFailure.unauthenticated }
        return key
    }
}
