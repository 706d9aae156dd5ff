import AMQP
import Crypto
import Foundation
@testable import HeraldApple
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The parts of `apple.token` / `apple.revoke` that need no server: the queue's several job
/// types, the sealing of refresh tokens and its key rotation, and Apple's answers.
@Suite struct AppleTokenUnitTests {
    let decoder = JobDecoder<AppleJob>(maxBytes: 4096)

    func properties(_ type: String) -> AMQPProperties {
        JobEnvelope(messageID: "m-1", typeName: type).properties()
    }

    @Test func theAppleQueueReadsEachMemberAsItselfAndRefusesOthers() throws {
        let token = #"{"version":1,"account_id":"u-1","client_id":"com.example.app","authorization_code":"c.0.x"}"#
        let decoded = try decoder.decode(body: Array(token.utf8), properties: properties("apple.token.v1")).get().1
        #expect(decoded == .token(AppleTokenJob(accountID: "u-1", clientID: "com.example.app", authorizationCode: "c.0.x")))
        let revoke = #"{"version":1,"account_id":"u-1","client_id":"com.example.app"}"#
        #expect(try decoder.decode(body: Array(revoke.utf8), properties: properties("apple.revoke.v1")).get().1
                == .revoke(AppleRevokeJob(accountID: "u-1", clientID: "com.example.app")))
        // The revoke body as a token job: the token's schema applies to it.
        guard case .failure(let missing) = decoder.decode(body: Array(revoke.utf8), properties: properties("apple.token.v1")) else {
            Issue.record("a token job without a code was accepted"); return
        }
        #expect(missing.reason == "missing required field 'authorization_code'")
        guard case .failure(let unknown) = decoder.decode(body: Array(revoke.utf8), properties: properties("sms.verification.v1")) else {
            Issue.record("another queue's type was accepted"); return
        }
        #expect(unknown.reason.hasPrefix("unknown job type 'sms.verification.v1' for this queue; expected apple.token.v1 or apple.revoke.v1"))
        guard case .failure(let version) = decoder.decode(body: Array(revoke.utf8), properties: properties("apple.revoke.v2")) else {
            Issue.record("a later version was accepted"); return
        }
        #expect(version.reason.hasPrefix("unsupported version 'apple.revoke.v2'"))
        let bad = #"{"version":1,"account_id":"u-1","client_id":"com.example.app","authorization_code":"a b"}"#
        guard case .failure(let code) = decoder.decode(body: Array(bad.utf8), properties: properties("apple.revoke.v1")) else {
            Issue.record("a code with a space was accepted"); return
        }
        #expect(code.reason == "authorization_code must be 1 to 1024 printable ASCII characters without spaces")
        #expect(!code.reason.contains("a b"))
    }

    @Test func aSealedTokenOpensOnlyInItsRecordAndUnderARotatedRing() throws {
        let old = Array(repeating: UInt8(7), count: 32), new = Array(repeating: UInt8(9), count: 32)
        let first = SecretSealer(keyRing: try KeyRing(keys: ["k1": old], activeKeyID: "k1"))
        let secret = Secret("r0123456789abcdef.0.refresh")
        let sealed = try first.seal(secret, context: "acc-1")
        #expect(sealed.keyID == "k1" && sealed.nonce.count == 12 && sealed.tag.count == 16)
        #expect(!String(decoding: sealed.ciphertext, as: UTF8.self).contains("refresh"))
        #expect(try first.seal(secret, context: "acc-1").nonce != sealed.nonce, "a fresh nonce per seal")
        #expect(throws: SecretSealingError.self) { try first.open(sealed, context: "acc-2") }
        // Rotated: new seals use k2, the old one still opens while k1 stays in the ring.
        let rotated = SecretSealer(keyRing: try KeyRing(keys: ["k1": old, "k2": new], activeKeyID: "k2"))
        #expect(try rotated.open(sealed, context: "acc-1") == secret)
        #expect(try rotated.seal(secret, context: "acc-1").keyID == "k2")
        let dropped = SecretSealer(keyRing: try KeyRing(keys: ["k2": new], activeKeyID: "k2"))
        do {
            _ = try dropped.open(sealed, context: "acc-1")
            Issue.record("opened under a key no longer in the ring")
        } catch {
            #expect(error.reason.contains("'k1'") && !error.reason.contains("refresh"))
        }
    }

    @Test func applesAnswersAreClassifiedAsItDocumentsThem() {
        let exchange = AppleCall.exchange(clientID: "c", code: Secret("x"))
        func answer(_ status: Int, _ body: String, _ call: AppleCall? = nil) -> ProviderAnswer<AppleGrant> {
            AppleAPI.answer(call ?? exchange, status: status, body: .init(string: body))
        }
        #expect(answer(400, #"{"error":"invalid_grant"}"#).disposition == .refused(code: "invalid_grant"))
        #expect(answer(400, #"{"error":"invalid_request"}"#).disposition == .refused(code: "invalid_request"))
        #expect(answer(400, #"{"error":"invalid_client"}"#).disposition == .next(code: "invalid_client"))
        #expect(answer(400, #"{"error":"something else"}"#).disposition == .refused(code: "apple_error"))
        #expect(answer(503, "").disposition == .next(code: "http-503"))
        #expect(answer(429, "").disposition == .next(code: "http-429"))
        #expect(answer(200, #"{"access_token":"a","id_token":"i"}"#).disposition == .refused(code: "malformed_token_response"))
        let granted = answer(200, #"{"access_token":"a","refresh_token":"r","id_token":"i","token_type":"Bearer","expires_in":3600}"#)
        #expect(granted.disposition == .accepted(providerMessageID: nil))
        #expect(granted.detail == AppleGrant(refreshToken: Secret("r"), idToken: "i"))
        #expect(answer(200, "", .revoke(clientID: "c", refreshToken: Secret("r"))).disposition == .accepted(providerMessageID: nil))
    }

    @Test func theClientSecretIsCachedPerClientAndSignedAgainAtHalfItsLifetime() async throws {
        let clock = MovableClock()
        let pem = P256Key.pem()
        let secrets = try AppleClientSecret(pem: pem, keyID: "KEY1234567", teamID: "TEAM123456", lifetimeSeconds: 3600, now: clock.now)
        let first = try await secrets.secret(for: "com.example.app")
        #expect(try await secrets.secret(for: "com.example.app") == first)
        _ = try await secrets.secret(for: "com.example.web")
        #expect(await secrets.signatures == 2)
        clock.advance(1801)
        #expect(try await secrets.secret(for: "com.example.app") != first)
        #expect(await secrets.signatures == 3)
        let parts = first.revealed.split(separator: ".")
        let header = try #require(Data(base64Encoded: Self.padded(String(parts[0]))))
        let claims = try #require(Data(base64Encoded: Self.padded(String(parts[1]))))
        let h = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
        let c = try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any])
        #expect(h["alg"] as? String == "ES256" && h["kid"] as? String == "KEY1234567")
        #expect(c["iss"] as? String == "TEAM123456" && c["sub"] as? String == "com.example.app" && c["aud"] as? String == "https://appleid.apple.com")
        #expect((c["exp"] as? Int ?? 0) - (c["iat"] as? Int ?? 0) == 3600)
    }

    static func padded(_ base64URL: String) -> String {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return text
    }
}

/// A clock a test moves forward.
final class MovableClock: @unchecked Sendable {
    private let lock = NSLock()
    private var offset: TimeInterval = 0
    func advance(_ seconds: TimeInterval) { lock.withLock { offset += seconds } }
    var now: @Sendable () -> Date { { [self] in Date().addingTimeInterval(lock.withLock { offset }) } }
}

enum P256Key {
    static func pem() -> String { P256.Signing.PrivateKey().pemRepresentation }
}
