import AMQP
import Crypto
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldPushCheck
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Logging
import PostgresNIO
import _CryptoExtras

/// A clock the provider tokens read, which a test can move forward.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(_ seconds: TimeInterval) { lock.withLock { offset += seconds } }
    var now: @Sendable () -> Date { { [self] in Date().addingTimeInterval(lock.withLock { offset }) } }
}

/// `herald-push` in-process on a test's namespace, pushing to two local APNs servers
/// (production and sandbox hosts) with a `.p8` key and TLS material made for the test, and to
/// a local FCM v1 + OAuth2 server with a service account made for the test.
final class PushFixture: @unchecked Sendable {
    let harness: Harness
    let tls: TestTLS
    let apnsKey = P256.Signing.PrivateKey()
    let keyID = "KEY1234567"
    let teamID = "TEAM987654"
    let production: APNsStubServer
    let sandbox: APNsStubServer
    let fcm: FCMStubServer
    let serviceAccountJSON: String
    /// The channel's events, as a front API's consumer reads them.
    let events: EventTap
    let spool: String
    let clock = TestClock()

    init(_ harness: Harness, apns responder: @escaping APNsStubServer.Responder = { _ in .ok },
         fcm fcmResponder: @escaping FCMStubServer.Responder = { _ in .ok }, fcmExpiresIn: Int = 3600) async throws {
        self.harness = harness
        tls = try await TestTLS.make()
        let credentials = APNsStubServer.Credentials(publicKey: apnsKey.publicKey, keyID: keyID, teamID: teamID)
        production = try await APNsStubServer(tls: tls, credentials: credentials, responder: responder)
        sandbox = try await APNsStubServer(tls: tls, credentials: credentials, responder: responder)
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let email = "herald-push@test-project.iam.gserviceaccount.com"
        fcm = try await FCMStubServer(publicKey: rsa.publicKey, clientEmail: email, expiresIn: fcmExpiresIn, responder: fcmResponder)
        let account: [String: Any] = ["type": "service_account", "project_id": "test-project", "client_email": email,
                                      "private_key": rsa.pemRepresentation, "token_uri": fcm.tokenURL]
        serviceAccountJSON = String(decoding: try JSONSerialization.data(withJSONObject: account), as: UTF8.self)
        spool = NSTemporaryDirectory() + "herald-push-\(harness.namespace)"
        events = try await EventTap(harness, channel: "push")
        harness.onClose { await self.close() }
    }

    func configuration(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) -> HeraldConfiguration {
        var configuration = harness.configuration
        configuration.outbox.directory = spool
        configuration.push.delivery = .live
        configuration.push.rateLimitMax = 0
        configuration.push.apns.productionHost = production.baseURL
        configuration.push.apns.sandboxHost = sandbox.localhostURL
        configuration.push.apns.caFile = tls.caFile
        configuration.push.apns.key = apnsKey.pemRepresentation
        configuration.push.apns.keyID = keyID
        configuration.push.apns.teamID = teamID
        configuration.push.fcm.serviceAccount = serviceAccountJSON
        configuration.push.fcm.sendEndpoint = fcm.baseURL
        configure(&configuration)
        return configuration
    }

    func handler(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) throws -> PushHandler {
        try PushHandler(configuration: configuration(configure), now: clock.now)
    }

    func start(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> RunningWorker {
        try await startWithHandler(configure).0
    }

    /// The worker and its handler (whose provider token caches a test can look into).
    func startWithHandler(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> (RunningWorker, PushHandler) {
        let configuration = configuration(configure)
        let handler = try PushHandler(configuration: configuration, now: clock.now)
        return (try await harness.startRunner(.push, handler) { $0 = configuration }, handler)
    }

    /// A device token of this test: 64 hex digits for APNs, an FCM-looking one otherwise.
    func token(_ n: Int, platform: PushVerificationJob.Platform = .apns) -> String {
        let hex = SHA256.hash(data: Array("\(harness.namespace)-\(n)".utf8)).map { String(format: "%02x", $0) }.joined()
        return platform == .apns ? hex : "f" + hex.prefix(20) + ":APA91b" + hex.suffix(40)
    }

    func job(_ n: Int, platform: PushVerificationJob.Platform = .apns, environment: PushVerificationJob.Environment = .production,
             timeout: Int? = nil, receipt: String? = nil) -> PushVerificationJob {
        PushVerificationJob(receipt: receipt ?? "\(harness.namespace)-r\(n)-\(UUID().uuidString.prefix(4))", deviceToken: token(n, platform: platform),
                            platform: platform, environment: environment, appID: platform == .apns ? "com.example.herald" : "com.example.herald.android",
                            timeoutSeconds: timeout)
    }

    /// (receipt, secret) the APNs servers received for `token`, newest last.
    func apnsSecrets(_ token: String) -> [(String, String)] {
        (production.requests + sandbox.requests).filter { $0.token == token }.compactMap { request in
            guard let inner = request.payload["herald"] as? [String: String], let receipt = inner["receipt"], let secret = inner["secret"] else { return nil }
            return (receipt, secret)
        }
    }

    func fcmSecrets(_ token: String) -> [(String, String)] {
        fcm.messages.filter { $0.token == token }.compactMap { message in
            guard let text = message.data["herald"],
                  let inner = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String],
                  let receipt = inner["receipt"], let secret = inner["secret"] else { return nil }
            return (receipt, secret)
        }
    }

    func confirm(_ receipt: String, _ secret: String) async throws -> PushVerifier.Result {
        try await HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
            .confirmAppVerification(receipt: receipt, secret: secret, logger: harness.logger)
    }

    struct Row: Sendable {
        var state: String
        var secretStatus: String
        var provider: String?
        var providerMessageID: String?
        var httpStatus: Int?
        var reason: String?
        var sends: Int
    }

    func verification(_ receipt: String) async throws -> Row? {
        let rows = try await harness.database.query("""
            SELECT state, secret_status, provider, provider_message_id, http_status, reason, sends FROM herald.push_verifications WHERE receipt = \(receipt)
            """, logger: harness.logger)
        for try await r in rows.decode((String, String, String?, String?, Int?, String?, Int).self) {
            return Row(state: r.0, secretStatus: r.1, provider: r.2, providerMessageID: r.3, httpStatus: r.4, reason: r.5, sends: r.6)
        }
        return nil
    }

    func health(_ token: String, platform: PushVerificationJob.Platform = .apns) async throws -> PushTokens.Health? {
        try await PushTokens.health(platform: platform, token: token, client: harness.database, logger: harness.logger)
    }


    func close() async {
        await production.close()
        await sandbox.close()
        await fcm.close()
        tls.remove()
        try? FileManager.default.removeItem(atPath: spool)
    }
}
