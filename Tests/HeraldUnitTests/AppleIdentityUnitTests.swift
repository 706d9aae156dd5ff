import Foundation
@testable import HeraldApple
@testable import HeraldAppleCheck
import HeraldRuntime
@testable import HeraldWire
import Testing

/// The pieces of the identity-token check that need no server: the nonce hash, the
/// Cache-Control reading, the `apple.*` keys of the check, and error texts.
@Suite struct AppleIdentityUnitTests {
    @Test func theNonceIsLowercaseHexSHA256ComparedWhole() {
        // FIPS 180-2's test vector.
        #expect(AppleNonce.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AppleNonce.matches(raw: "abc", claim: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(AppleNonce.matches(raw: "abc", claim: "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"))
        #expect(!AppleNonce.matches(raw: "abc", claim: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ae"))
        #expect(!AppleNonce.matches(raw: "abc", claim: "ba7816bf"))
        #expect(!AppleNonce.matches(raw: "abc", claim: "abc"))
        #expect(!AppleNonce.matches(raw: "abc", claim: ""))
    }

    @Test func cacheControlMaxAgeIsRead() {
        #expect(AppleKeySet.maxAge("max-age=86400") == 86400)
        #expect(AppleKeySet.maxAge("public, max-age=300, must-revalidate") == 300)
        #expect(AppleKeySet.maxAge("Max-Age=\"60\"") == 60)
        #expect(AppleKeySet.maxAge("no-store") == 0)
        #expect(AppleKeySet.maxAge("max-age=300, no-cache") == 0)
        #expect(AppleKeySet.maxAge("public") == nil)
        #expect(AppleKeySet.maxAge("max-age=-5") == nil)
        #expect(AppleKeySet.maxAge(nil) == nil)
    }

    @Test func theIdentityKeysAreReadAndABadOneIsNamed() throws {
        let read = try AppleConfiguration(source: ConfigSource(values: [
            "apple.client_ids": ["com.example.app", "com.example.web"], "apple.leeway_seconds": 30,
            "apple.jwks_url": "http://127.0.0.1:8080/auth/keys", "apple.jwks_refetch_interval_seconds": 5,
        ]))
        #expect(read.clientIDs == ["com.example.app", "com.example.web"])
        #expect(read.leewaySeconds == 30)
        #expect(read.jwksRefetchIntervalSeconds == 5)
        let defaults = AppleConfiguration()
        #expect(defaults.jwksURL == "https://appleid.apple.com/auth/keys")
        #expect(defaults.clientIDs.isEmpty)

        func key(_ values: [String: Any]) -> String? {
            do {
                let dotted = Dictionary(uniqueKeysWithValues: values.map { ("apple." + $0.key, $0.value) })
                _ = try AppleConfiguration(source: ConfigSource(values: dotted))
                return nil
            } catch let error as ConfigError {
                return error.key
            } catch {
                return "\(error)"
            }
        }
        #expect(key(["client_ids": ["com.example app"]]) == "apple.client_ids")
        #expect(key(["client_ids": [""]]) == "apple.client_ids")
        #expect(key(["jwks_url": "ftp://example.com/keys"]) == "apple.jwks_url")
        #expect(key(["jwks_url": "http://keys.example.com/auth/keys"]) == "apple.jwks_url", "clear text to a remote host")
        #expect(key(["jwks_url": "http://keys.example.com/auth/keys", "allow_insecure_transport": true]) == nil)
        #expect(key(["jwks_refetch_interval_seconds": 0]) == "apple.jwks_refetch_interval_seconds")
        #expect(key(["leeway_seconds": 3600]) == "apple.leeway_seconds")
        #expect(key(["jwks_timeout_ms": 10]) == "apple.jwks_timeout_ms")
    }

    @Test func errorTextsNameTheCheckOnly() {
        #expect("\(AppleTokenError.nonceMismatch)" == "apple token refused: nonce_mismatch")
        #expect(AppleTokenError.issuedInFuture.code == "issued_in_future")
        #expect("\(AppleTokenError.malformed("header kid is missing"))" == "apple token malformed: header kid is missing")
    }
}
