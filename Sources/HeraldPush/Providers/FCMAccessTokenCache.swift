import AsyncHTTPClient
import Foundation
import HeraldRuntime
import JWTKit
import Logging
import NIOCore

/// A Google service account's JSON key, as downloaded from the console.
public struct ServiceAccount: Sendable {
    public var clientEmail: String
    public var projectID: String
    public var tokenURI: String
    let key: JWTKit.Insecure.RSA.PrivateKey

    /// Errors name what is missing, never the key.
    public init(json: String) throws(ConfigError) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw ConfigError(key: "push.fcm.service_account", reason: "not a JSON object")
        }
        guard let email = object["client_email"] as? String, let pem = object["private_key"] as? String else {
            throw ConfigError(key: "push.fcm.service_account", reason: "client_email and private_key are required")
        }
        do {
            key = try JWTKit.Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            throw ConfigError(key: "push.fcm.service_account", reason: "private_key is not a PEM RSA private key")
        }
        clientEmail = email
        projectID = object["project_id"] as? String ?? ""
        tokenURI = object["token_uri"] as? String ?? "https://oauth2.googleapis.com/token"
    }

    /// The RS256 JWT bearer assertion (RFC 7523, jwt-kit) for the FCM scope.
    func assertion(audience: String, now: Date) async throws -> String {
        let iat = Int64(now.timeIntervalSince1970)
        let claims = AssertionClaims(iss: clientEmail, scope: "https://www.googleapis.com/auth/firebase.messaging",
                                     aud: audience, iat: iat, exp: iat + 3600)
        let keys = JWTKeyCollection()
        await keys.add(rsa: key, digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }

    struct AssertionClaims: JWTPayload {
        var iss, scope, aud: String
        var iat, exp: Int64
        func verify(using _: some JWTAlgorithm) async throws {}
    }
}

/// The OAuth2 access token FCM calls carry: fetched with a signed JWT assertion from the
/// token endpoint, cached until five minutes before it expires (or until FCM refuses it),
/// shared by every request; concurrent callers wait for one fetch.
public actor FCMAccessTokenCache {
    public let account: ServiceAccount
    public let endpoint: String
    let http: HTTPClient
    let timeout: TimeAmount
    let now: @Sendable () -> Date
    private var current: (token: String, expires: Date)?
    private var fetching: Task<(String, Date), any Error>?
    public private(set) var fetches = 0

    public init(account: ServiceAccount, endpoint: String, http: HTTPClient, timeout: TimeAmount, now: @escaping @Sendable () -> Date = Date.init) {
        self.account = account
        self.endpoint = endpoint.isEmpty ? account.tokenURI : endpoint
        self.http = http
        self.timeout = timeout
        self.now = now
    }

    public struct FetchError: Error, CustomStringConvertible {
        public var description: String
    }

    public func token(logger: Logger) async throws -> String {
        if let current, current.expires.timeIntervalSince(now()) > 300 { return current.token }
        if let fetching { return try await fetching.value.0 }
        let task = Task { try await self.fetch(logger: logger) }
        fetching = task
        defer { fetching = nil }
        let (token, expires) = try await task.value
        current = (token, expires)
        return token
    }

    /// FCM answered 401: drop `token` so the next call fetches another.
    public func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }

    private func fetch(logger: Logger) async throws -> (String, Date) {
        fetches += 1
        let issued = now()
        var request = HTTPClientRequest(url: endpoint)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=" + PercentEncoding.form.encode("urn:ietf:params:oauth:grant-type:jwt-bearer")
            + "&assertion=" + (try await account.assertion(audience: endpoint, now: issued))
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await http.execute(request, timeout: timeout, logger: logger)
        let body = try await response.body.collect(upTo: 64 * 1024)
        guard response.status.code == 200,
              let object = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any],
              let token = object["access_token"] as? String
        else {
            throw FetchError(description: "the OAuth2 token endpoint answered \(response.status.code)")
        }
        let lifetime = (object["expires_in"] as? Int) ?? 3600
        return (token, issued.addingTimeInterval(TimeInterval(lifetime)))
    }
}
