import AsyncHTTPClient
import Foundation
import HeraldRuntime
import Logging
import NIOCore
import PostgresNIO

/// Firebase Cloud Messaging HTTP v1: `POST {send_endpoint}/v1/projects/{project}/messages:send`
/// with the cached OAuth2 access token; a data-only, high-priority Android message whose data
/// carries `<payload_key>`: `{"receipt","secret"}` as a JSON string.
public struct FCMProvider: DeliveryProvider {
    public let configuration: PushConfiguration.FCM
    public let payloadKey: String
    public let tokens: FCMAccessTokenCache?
    let http: HTTPClient
    public var name: String { "fcm" }

    public init(configuration: PushConfiguration.FCM, payloadKey: String, tokens: FCMAccessTokenCache?, http: HTTPClient? = nil) {
        self.configuration = configuration
        self.payloadKey = payloadKey
        self.tokens = tokens
        self.http = http ?? ProviderHTTP.client
    }

    var projectID: String { configuration.projectID.isEmpty ? tokens?.account.projectID ?? "" : configuration.projectID }

    public func send(_ message: PushMessage, context: DeliveryContext) async -> ProviderAnswer<InvalidToken> {
        await push(message, logger: context.logger).chainAnswer
    }

    /// One push, with one retry after a refresh when our credentials were refused.
    public func push(_ message: PushMessage, logger: Logger) async -> PushProviderResponse {
        guard let tokens else { return PushProviderResponse(.transient("fcm_not_configured")) }
        let first = await post(message, tokens: tokens, logger: logger)
        guard case .credentialsRefused(let why) = first.answer else { return first }
        logger.warning("FCM refused the access token; fetching a new one and retrying once", metadata: ["fcm_reason": "\(why)"])
        let second = await post(message, tokens: tokens, logger: logger)
        if case .credentialsRefused(let again) = second.answer {
            logger.error("FCM refused a fresh access token: check push.fcm.service_account and project_id",
                         metadata: ["fcm_reason": "\(again)", "alert": "fcm_credentials"])
            return PushProviderResponse(.transient("fcm_credentials_refused:\(again)"), httpStatus: second.httpStatus)
        }
        return second
    }

    /// The request body (data-only, high priority, `ttl` until the secret expires).
    public static func body(_ message: PushMessage, key: String, now: Date = Date()) -> [UInt8] {
        let inner = (try? JSONSerialization.data(withJSONObject: ["receipt": message.receipt, "secret": message.secret.revealed], options: [.sortedKeys])) ?? Data()
        let ttl = max(0, Int(message.expiresAt.timeIntervalSince(now)))
        let object: [String: Any] = ["message": [
            "token": message.deviceToken,
            "data": [key: String(decoding: inner, as: UTF8.self)],
            "android": ["priority": "HIGH", "ttl": "\(ttl)s", "restricted_package_name": message.appID],
        ]]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
    }


    private func post(_ message: PushMessage, tokens: FCMAccessTokenCache, logger: Logger) async -> PushProviderResponse {
        let access: String
        do {
            access = try await tokens.token(logger: logger)
        } catch {
            return PushProviderResponse(.transient("fcm_token_endpoint: \(error)"))
        }
        var request = HTTPClientRequest(url: "\(configuration.sendEndpoint)/v1/projects/\(PercentEncoding.form.encode(projectID))/messages:send")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(access)")
        request.headers.add(name: "Content-Type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(bytes: Self.body(message, key: payloadKey)))
        do {
            let response = try await http.execute(request, timeout: .milliseconds(Int64(configuration.timeoutMilliseconds)), logger: logger)
            let data = try await response.body.collect(upTo: 64 * 1024)
            let json = (try? JSONSerialization.jsonObject(with: Data(buffer: data))) as? [String: Any]
            let answer = PushAnswers.fcm(status: Int(response.status.code), body: json)
            if case .credentialsRefused = answer { await tokens.invalidate(access) }
            return PushProviderResponse(answer, httpStatus: Int(response.status.code))
        } catch let error as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) {
            return PushProviderResponse(.timeout)
        } catch {
            return PushProviderResponse(.transient(ProviderHTTP.describe(error)))
        }
    }
}
