import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

@Suite struct SecretTests {
    let k1 = Array(repeating: UInt8(1), count: 32)
    let k2 = Array(repeating: UInt8(2), count: 32)

    @Test func aSecretNeverShowsItself() {
        let secret = Secret("123456")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "<redacted>")
        var dumped = ""
        dump(secret, to: &dumped)
        #expect(!dumped.contains("123456"))
        #expect(secret.revealed == "123456")
    }

    @Test func hashesVerifyOnlyTheSameSecretInTheSameContext() throws {
        let hasher = SecretHasher(keyRing: try KeyRing(keys: ["k1": k1], activeKeyID: "k1"))
        let stored = hasher.hash(Secret("123456"), context: "verification:v-1")
        #expect(stored.keyID == "k1")
        #expect(stored.digest.count == 32)
        #expect(!stored.digest.elementsEqual(Array("123456".utf8)))
        #expect(hasher.verify(Secret("123456"), context: "verification:v-1", against: stored))
        #expect(!hasher.verify(Secret("123457"), context: "verification:v-1", against: stored))
        #expect(!hasher.verify(Secret("123456"), context: "verification:v-2", against: stored))
    }

    @Test func keysRotateWithoutLosingPendingSecrets() throws {
        let old = SecretHasher(keyRing: try KeyRing(keys: ["k1": k1], activeKeyID: "k1"))
        let pending = old.hash(Secret("654321"), context: "r")
        let rotated = SecretHasher(keyRing: try KeyRing(keys: ["k1": k1, "k2": k2], activeKeyID: "k2"))
        #expect(rotated.verify(Secret("654321"), context: "r", against: pending))
        #expect(rotated.hash(Secret("654321"), context: "r").keyID == "k2")
        let retired = SecretHasher(keyRing: try KeyRing(keys: ["k2": k2], activeKeyID: "k2"))
        #expect(!retired.verify(Secret("654321"), context: "r", against: pending))
    }

    @Test func keyRingsRefuseWeakOrMissingKeysWithoutQuotingThem() throws {
        #expect(throws: ConfigError.self) { try KeyRing(keys: ["k1": [1, 2, 3]], activeKeyID: "k1") }
        #expect(throws: ConfigError.self) { try KeyRing(keys: ["k1": k1], activeKeyID: "k9") }
        let encoded = Data(k1).base64EncodedString()
        let ring = try KeyRing.parse("k1:\(encoded), k2:\(Data(k2).base64EncodedString())", activeKeyID: "k2", key: "secrets.hmac_keys")
        #expect(ring.activeKeyID == "k2")
        do {
            _ = try KeyRing.parse("k1:\(encoded.prefix(10))", activeKeyID: "k1", key: "secrets.hmac_keys")
            Issue.record("a 7-byte key was accepted")
        } catch {
            #expect(error.key == "secrets.hmac_keys")
            #expect(!error.description.contains(String(encoded.prefix(10))))
        }
    }

    @Test func codesAndTokensComeFromTheCSPRNG() {
        let codes: [String] = (0..<2000).map { _ in SecretGenerator.numericCode(length: 6).revealed }
        #expect(codes.allSatisfy { $0.count == 6 && $0.allSatisfy { $0.isNumber } })
        #expect(Set(codes).count > 1990)
        // Every digit in every position turns up (uniform digits, not modulo-biased bytes).
        for position in 0..<6 {
            let digits = Set(codes.map { Array($0)[position] })
            #expect(digits.count == 10)
        }
        let token = SecretGenerator.token(bytes: 16).revealed
        #expect(token.count == 22) // 128 bits in base64url
        #expect(token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(SecretGenerator.token().revealed != SecretGenerator.token().revealed)
    }
}
