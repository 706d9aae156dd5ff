import Crypto
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldPushCheck
@testable import HeraldRuntime
import Testing
import _CryptoExtras

/// The provider tokens (ES256 JWT for APNs, RS256 assertion for FCM), their caching, and how
/// every APNs and FCM answer maps; no server needed.
@Suite struct PushUnitTests {
    final class Clock: @unchecked Sendable {
        var now = Date(timeIntervalSince1970: 1_800_000_000.75)
        var read: @Sendable () -> Date { { self.now } }
    }

    /// A compact JWT's parts, decoded here (independently of jwt-kit, which signs them):
    /// header and claims as JSON objects, the claims' text, the signature and the signed input.
    static func parse(_ token: String) -> (header: [String: Any], claims: [String: Any], claimsText: String, signature: [UInt8], input: [UInt8])? {
        func decode(_ part: Substring) -> [UInt8]? {
            var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return Data(base64Encoded: base64).map(Array.init)
        }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = decode(parts[0]), let c = decode(parts[1]), let signature = decode(parts[2]),
              let header = (try? JSONSerialization.jsonObject(with: Data(h))) as? [String: Any],
              let claims = (try? JSONSerialization.jsonObject(with: Data(c))) as? [String: Any]
        else { return nil }
        return (header, claims, String(decoding: c, as: UTF8.self), signature, Array("\(parts[0]).\(parts[1])".utf8))
    }

    @Test func theAPNsTokenIsAnES256JWTWithKidIssAndAnIntegerIat() async throws {
        let key = P256.Signing.PrivateKey()
        let clock = Clock()
        let cache = try APNsTokenCache(pem: key.pemRepresentation, keyID: "ABC123DEFG", teamID: "TEAM123456", refreshInterval: 3000, now: clock.read)
        let token = await cache.token()
        let (header, claims, claimsText, signature, input) = try #require(Self.parse(token))
        #expect(header as? [String: String] == ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"])
        #expect(claims["iss"] as? String == "TEAM123456")
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims.count == 2, "iss and iat only")
        #expect(claimsText.contains(#""iat":1800000000"#), "an integer, not 1800000000.75")
        #expect(!token.contains("="), "base64url without padding")
        #expect(signature.count == 64, "ES256 is r || s, 32 bytes each")
        #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: input))
    }

    @Test func theAPNsTokenIsReusedUntilDueThenSignedAgain() async throws {
        let clock = Clock()
        let cache = try APNsTokenCache(pem: P256.Signing.PrivateKey().pemRepresentation, keyID: "K", teamID: "T", refreshInterval: 3000, now: clock.read)
        let first = await cache.token()
        for _ in 0..<1000 { #expect(await cache.token() == first) }
        clock.now += 2999
        #expect(await cache.token() == first)
        #expect(cache.signatureCount == 1)
        clock.now += 2
        let second = await cache.token()
        #expect(second != first)
        #expect(cache.signatureCount == 2)
        // A refusal of an older token does not throw away the current one.
        cache.invalidate(first)
        #expect(await cache.token() == second)
        cache.invalidate(second)
        #expect(await cache.token() != second)
        #expect(cache.signatureCount == 3)
        // Callers that arrive together while a token is due wait for one signature.
        clock.now += 3001
        let together = await withTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { await cache.token() } }
            return await Set(group.reduce(into: []) { $0.append($1) })
        }
        #expect(together.count == 1)
        #expect(cache.signatureCount == 4)
    }

    @Test func aKeyThatIsNotAP256PEMIsAConfigurationErrorWithoutTheKey() {
        let pem = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----"
        #expect(throws: ConfigError(key: "push.apns.key", reason: "not a PEM P-256 private key (.p8)")) {
            try APNsTokenCache(pem: pem, keyID: "K", teamID: "T", refreshInterval: 3000)
        }
    }

    @Test func theFCMAssertionIsAnRS256JWTForTheMessagingScope() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let json = try JSONSerialization.data(withJSONObject: [
            "client_email": "svc@p.iam.gserviceaccount.com", "private_key": key.pemRepresentation, "project_id": "p",
        ])
        let account = try ServiceAccount(json: String(decoding: json, as: UTF8.self))
        #expect(account.tokenURI == "https://oauth2.googleapis.com/token")
        let assertion = try await account.assertion(audience: "https://oauth2.googleapis.com/token", now: Date(timeIntervalSince1970: 1_800_000_000))
        let (header, claims, _, signature, input) = try #require(Self.parse(assertion))
        #expect(header["alg"] as? String == "RS256")
        #expect(claims["iss"] as? String == "svc@p.iam.gserviceaccount.com")
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["exp"] as? Int == 1_800_003_600)
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims["aud"] as? String == "https://oauth2.googleapis.com/token")
        #expect(key.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: input, padding: .insecurePKCS1v1_5))
        #expect(throws: ConfigError.self) { try ServiceAccount(json: #"{"client_email":"x"}"#) }
    }

    @Test func everyAPNsAnswerMaps() {
        #expect(PushAnswers.apns(status: 200, reason: nil, timestamp: nil, apnsID: "ID") == .delivered(id: "ID"))
        #expect(PushAnswers.apns(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_500, apnsID: nil)
            == .invalidToken(.unregistered, detail: "Unregistered", since: Date(timeIntervalSince1970: 1_700_000_000.5)))
        #expect(PushAnswers.apns(status: 400, reason: "BadDeviceToken", timestamp: nil, apnsID: nil) == .invalidToken(.badDeviceToken, detail: "BadDeviceToken", since: nil))
        #expect(PushAnswers.apns(status: 400, reason: "DeviceTokenNotForTopic", timestamp: nil, apnsID: nil)
            == .invalidToken(.badDeviceToken, detail: "DeviceTokenNotForTopic", since: nil))
        #expect(PushAnswers.apns(status: 403, reason: "ExpiredProviderToken", timestamp: nil, apnsID: nil) == .credentialsRefused("ExpiredProviderToken"))
        #expect(PushAnswers.apns(status: 403, reason: "InvalidProviderToken", timestamp: nil, apnsID: nil) == .credentialsRefused("InvalidProviderToken"))
        #expect(PushAnswers.apns(status: 429, reason: "TooManyRequests", timestamp: nil, apnsID: nil) == .transient("TooManyRequests"))
        #expect(PushAnswers.apns(status: 500, reason: "InternalServerError", timestamp: nil, apnsID: nil) == .transient("InternalServerError"))
        #expect(PushAnswers.apns(status: 503, reason: "ServiceUnavailable", timestamp: nil, apnsID: nil) == .transient("ServiceUnavailable"))
        #expect(PushAnswers.apns(status: 400, reason: "BadTopic", timestamp: nil, apnsID: nil) == .rejected("BadTopic"))
        #expect(PushAnswers.apns(status: 413, reason: "PayloadTooLarge", timestamp: nil, apnsID: nil) == .rejected("PayloadTooLarge"))
        #expect(PushAnswers.apns(status: 403, reason: "BadCertificate", timestamp: nil, apnsID: nil) == .rejected("BadCertificate"))
    }

    static func fcmError(_ status: Int, _ name: String, code: String? = nil) -> [String: Any] {
        var error: [String: Any] = ["code": status, "message": "m", "status": name]
        if let code { error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": code]] }
        return ["error": error]
    }

    @Test func everyFCMAnswerMaps() {
        #expect(PushAnswers.fcm(status: 200, body: ["name": "projects/p/messages/1"]) == .delivered(id: "projects/p/messages/1"))
        #expect(PushAnswers.fcm(status: 404, body: Self.fcmError(404, "NOT_FOUND", code: "UNREGISTERED")) == .invalidToken(.unregistered, detail: "UNREGISTERED", since: nil))
        #expect(PushAnswers.fcm(status: 400, body: Self.fcmError(400, "INVALID_ARGUMENT", code: "INVALID_ARGUMENT"))
            == .invalidToken(.invalidArgument, detail: "INVALID_ARGUMENT", since: nil))
        #expect(PushAnswers.fcm(status: 401, body: Self.fcmError(401, "UNAUTHENTICATED")) == .credentialsRefused("UNAUTHENTICATED"))
        #expect(PushAnswers.fcm(status: 429, body: Self.fcmError(429, "RESOURCE_EXHAUSTED", code: "QUOTA_EXCEEDED")) == .transient("QUOTA_EXCEEDED"))
        #expect(PushAnswers.fcm(status: 503, body: Self.fcmError(503, "UNAVAILABLE", code: "UNAVAILABLE")) == .transient("UNAVAILABLE"))
        #expect(PushAnswers.fcm(status: 500, body: nil) == .transient("http-500"))
        #expect(PushAnswers.fcm(status: 403, body: Self.fcmError(403, "PERMISSION_DENIED", code: "SENDER_ID_MISMATCH")) == .rejected("SENDER_ID_MISMATCH"))
    }

    static let message = PushMessage(receipt: "r-1", secret: Secret("s3cr3t"), deviceToken: "ab12", platform: .apns, environment: .production,
                                     appID: "com.example", expiresAt: Date(timeIntervalSince1970: 1_800_000_300), messageID: "m")

    @Test func theAPNsPayloadIsABackgroundPushWithTheNamespacedReceiptAndSecret() throws {
        let bytes = APNsProvider.payload(Self.message, key: "herald")
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"aps":{"content-available":1},"herald":{"receipt":"r-1","secret":"s3cr3t"}}"#)
        #expect(bytes.count <= APNsProvider.maxPayloadBytes)
    }

    @Test func theFCMMessageIsDataOnlyHighPriorityWithItsTTL() throws {
        let bytes = FCMProvider.body(Self.message, key: "herald", now: Date(timeIntervalSince1970: 1_800_000_000))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let message = try #require(object["message"] as? [String: Any])
        #expect(message["notification"] == nil)
        #expect(message["token"] as? String == "ab12")
        #expect(message["data"] as? [String: String] == ["herald": #"{"receipt":"r-1","secret":"s3cr3t"}"#])
        #expect(message["android"] as? [String: String] == ["priority": "HIGH", "ttl": "300s", "restricted_package_name": "com.example"])
    }

    @Test func tokensAreKeptHashedWithAHint() {
        let token = String(repeating: "ab", count: 32)
        #expect(PushTokens.hash(platform: .apns, token: token) == PushTokens.hash(platform: .apns, token: token.uppercased()))
        #expect(PushTokens.hash(platform: .apns, token: token) != PushTokens.hash(platform: .fcm, token: token))
        #expect(PushTokens.hash(platform: .apns, token: token).count == 64)
        #expect(PushTokens.hint(token) == "ababab…abab")
        #expect(!PushTokens.hint("short").contains("s"))
    }

    @Test func thePushConfigurationHasDefaultsAndChecksItsKeys() throws {
        let defaults = try HeraldConfiguration(every: ConfigSource(values: [:]))
        #expect(defaults.push.delivery == .outbox)
        #expect(defaults.push.apns.productionHost == "https://api.push.apple.com")
        #expect(defaults.push.apns.sandboxHost == "https://api.sandbox.push.apple.com")
        #expect(defaults.push.apns.jwtRefreshSeconds == 3000)
        #expect(defaults.push.rateLimitMax == 3)
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: ["push.apns.jwt_refresh_seconds": 60])) }
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: ["push.apns.jwt_refresh_seconds": 3601])) }
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: ["push.apns.payload_key": "aps"])) }
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: ["push.delivery": "carrier-pigeon"])) }
        let live = try HeraldConfiguration(every: ConfigSource(values: [:], environment: [
            "HERALD_PUSH_DELIVERY": "live", "HERALD_PUSH_APNS_KEY": "pem", "HERALD_PUSH_APNS_KEY_ID": "K", "HERALD_PUSH_APNS_TEAM_ID": "T",
        ]))
        #expect(live.push.apns.key == "pem")
        #expect(live.push.effectiveValues["push.apns.key"] as? String == "***", "masked")
        #expect(throws: ConfigError.self) {
            try HeraldConfiguration(every: ConfigSource(values: [:], environment: ["HERALD_PUSH_DELIVERY": "live", "HERALD_PUSH_APNS_KEY": "pem"]))
        }
    }
}
