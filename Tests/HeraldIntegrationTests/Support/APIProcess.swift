import AsyncHTTPClient
import Foundation
import HeraldAPIStore
import HeraldRuntime
import NIOCore
import NIOHTTP1

/// `herald-api` as a real process on a test's namespace and database (its API port and ops
/// port free ports of its own), API keys made for the test, and an HTTP client for its routes.
/// Stopped (SIGTERM, then SIGKILL) when the harness closes.
final class APIProcess: Sendable {
    let harness: Harness
    let process: WorkerProcess
    let port: Int
    /// An all-scopes key, `id:secret`.
    let key: String
    private let keys: APIKeyStore

    /// `environment`: more of herald-api's settings (`HERALD_API_…`, `HERALD_APPLE_…`); `port`:
    /// its API port, when the test must know it first (a free one otherwise).
    init(_ harness: Harness, port: Int? = nil, environment: [String: String] = [:]) async throws {
        self.harness = harness
        keys = APIKeyStore(client: harness.database, hasher: SecretHasher(keyRing: try harness.configuration.secrets.keyRing()))
        let port = try port ?? WorkerProcess.freePort()
        self.port = port
        process = try WorkerProcess("herald-api", namespace: harness.namespace, environment: ["HERALD_API_PORT": String(port)].merging(environment) { $1 })
        let process = self.process
        harness.onClose { await process.stop() }
        try await process.waitUntilReady()
        key = try await Self.makeKey(keys, harness, name: "all", scopes: Set(APIScope.allCases))
    }

    /// A new key with `scopes`, as `id:secret`; `server`: one that names the end user's IP (`--asserts-client-ip`).
    func makeKey(_ name: String, scopes: Set<APIScope>, server: Bool = false) async throws -> String {
        try await Self.makeKey(keys, harness, name: name, scopes: scopes, server: server)
    }

    private static func makeKey(_ keys: APIKeyStore, _ harness: Harness, name: String, scopes: Set<APIScope>, server: Bool = false) async throws -> String {
        let (key, secret) = try await keys.create(name: "\(harness.namespace)-\(name)", scopes: scopes, expiresAt: nil, assertsClientIP: server,
                                                  logger: harness.logger)
        return "\(key.id):\(secret.revealed)"
    }

    func revoke(_ key: String) async throws {
        _ = try await keys.revoke(id: String(key.prefix { $0 != ":" }), logger: harness.logger)
    }

    struct Answer: CustomStringConvertible {
        var status: Int
        var headers: HTTPHeaders
        var text: String
        /// The body as a JSON object (empty when it is not one).
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:] }
        /// `/v1`'s error object.
        var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }
        var description: String { "\(status) \(text.prefix(600))" }
    }

    enum Auth {
        case basic(String), bearer(String), none
    }

    /// One request; `json` is encoded as the body, `body` sent as it is.
    func call(_ method: HTTPMethod, _ path: String, json: [String: Any]? = nil, body: String? = nil, contentType: String = "application/json",
              auth: Auth? = nil, headers extra: [(String, String)] = []) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        switch auth ?? .basic(key) {
        case .basic(let key): request.headers.add(name: "Authorization", value: "Basic " + Data(key.utf8).base64EncodedString())
        case .bearer(let key): request.headers.add(name: "Authorization", value: "Bearer " + key.replacingOccurrences(of: ":", with: "."))
        case .none: break
        }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        let payload = try json.map { try JSONSerialization.data(withJSONObject: $0) } ?? body.map { Data($0.utf8) }
        if let payload {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: payload))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, text: String(buffer: bytes))
    }
}
