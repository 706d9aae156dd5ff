import Foundation
import HeraldApple
import HeraldAppleCheck
import HeraldClient
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging
import Testing

/// Sign in with Apple identity tokens, checked against the local Apple over real HTTP: its
/// JWKS (keys made per run, rotated on demand, Cache-Control as configured) and tokens it
/// signs with any claims. Every refusal has its own error and never carries the token.
@Suite(.needsServers) struct AppleIdentityTests {
    static let app = "com.example.herald"
    static let web = "com.example.herald.web"

    /// The local Apple, a verifier on it (clients `app` and `web`, refetch interval 60 s,
    /// leeway 60 s) whose key set reads `clock`, always closed.
    func withApple(cacheControl: String? = "max-age=3600",
                   _ body: (AppleStubServer, AppleIdentityVerifier, TestClock) async throws -> Void) async throws {
        let apple = try await AppleStubServer(cacheControl: cacheControl)
        var configuration = AppleConfiguration()
        configuration.clientIDs = [Self.app, Self.web]
        configuration.jwksURL = apple.jwksURL
        configuration.jwksRefetchIntervalSeconds = 60
        configuration.leewaySeconds = 60
        let clock = TestClock()
        let keySet = AppleKeySet(configuration: configuration, client: ProviderHTTP.client, logger: Logger(label: "apple-test"), now: clock.now)
        let verifier = AppleIdentityVerifier(clientIDs: configuration.clientIDs, leewaySeconds: configuration.leewaySeconds, keySet: keySet)
        do {
            try await body(apple, verifier, clock)
        } catch {
            await apple.close()
            throw error
        }
        await apple.close()
    }

    /// The refusal `token` gets, and a check that its description does not hold the token.
    func refusal(_ verifier: AppleIdentityVerifier, _ token: String, nonce: String = "raw-nonce") async -> AppleTokenError? {
        do throws(AppleTokenError) {
            _ = try await verifier.verify(token, nonce: nonce)
            return nil
        } catch {
            let text = "\(error) \(error.code)"
            #expect(!text.contains(token), "the error holds the token")
            if let signature = token.split(separator: ".").last, signature.count > 10 {
                #expect(!text.contains(signature), "the error holds the signature")
            }
            return error
        }
    }

    @Test func aValidTokenIsAcceptedWithEveryField() async throws {
        try await withApple { apple, verifier, _ in
            let token = try await apple.identityToken(
                audience: Self.app, subject: "001234.abcdef.0001", rawNonce: "n-0S6_WzA2Mj",
                email: "x7k2@privaterelay.appleid.com", isPrivateEmail: true)
            let signIn = HeraldAppleSignIn(verifier: verifier)
            let identity = try await signIn.verifyIdentityToken(token, rawNonce: "n-0S6_WzA2Mj")
            #expect(identity.subject == "001234.abcdef.0001")
            #expect(identity.clientID == Self.app)
            #expect(identity.email == "x7k2@privaterelay.appleid.com")
            #expect(identity.emailVerified == true, "sent as the string \"true\"")
            #expect(identity.isPrivateEmail == true, "sent as the string \"true\"")
            #expect(identity.realUserStatus == .likelyReal)
            #expect(identity.expiresAt.timeIntervalSince(identity.issuedAt) == 600)

            // The booleans as JSON booleans, the other client id, no real_user_status.
            let web = try await apple.identityToken(
                audience: Self.web, subject: "001234.abcdef.0002", rawNonce: "other", email: "a@example.com",
                overriding: ["email_verified": .bool(true), "is_private_email": .bool(false)], removing: ["real_user_status"])
            let second = try await verifier.verify(web, nonce: "other")
            #expect(second.clientID == Self.web)
            #expect(second.emailVerified == true)
            #expect(second.isPrivateEmail == false)
            #expect(second.realUserStatus == nil)
            #expect(apple.jwksFetches == 1, "one fetch for both tokens")
        }
    }

    @Test func aTokenSignedWithAnotherKeyUnderAKnownKidIsABadSignature() async throws {
        try await withApple { apple, verifier, _ in
            let kid = try #require(apple.keyIDs.last)
            let forged = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce", key: .unpublished(kid: kid))
            #expect(await refusal(verifier, forged) == .badSignature)
            // A valid token's signature with one byte changed.
            let valid = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce")
            var parts = valid.split(separator: ".").map(String.init)
            let flipped = parts[2].first == "A" ? "B" : "A"
            parts[2] = flipped + parts[2].dropFirst()
            #expect(await refusal(verifier, parts.joined(separator: ".")) == .badSignature)
            // Claims of another token under this token's signature.
            let other = try await apple.identityToken(audience: Self.app, subject: "someone-else", rawNonce: "raw-nonce")
            let spliced = [parts[0], String(other.split(separator: ".")[1]), String(valid.split(separator: ".")[2])].joined(separator: ".")
            #expect(await refusal(verifier, spliced) == .badSignature)
        }
    }

    @Test func anUnknownKidIsRefusedThenFoundAfterARotationAndRefetchesAreRateLimited() async throws {
        try await withApple { apple, verifier, clock in
            let first = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce")
            _ = try await verifier.verify(first, nonce: "raw-nonce")
            #expect(apple.jwksFetches == 1)

            // Apple rotates right after our fetch: the new kid is unknown, and a fetch is not due
            // yet (60 s since the last), so it is refused without asking Apple.
            let kid = try apple.rotate()
            let rotated = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce")
            #expect(await refusal(verifier, rotated) == .unknownKey)
            #expect(apple.jwksFetches == 1, "a refetch within the interval")

            // Once the interval has passed, the unknown kid fetches the set again and is found.
            clock.advance(61)
            let identity = try await verifier.verify(rotated, nonce: "raw-nonce")
            #expect(identity.subject == "s")
            #expect(apple.jwksFetches == 2)
            #expect(await verifier.keySet.keyIDs.contains(kid))
            // The old key is still published and cached: its tokens still verify.
            _ = try await verifier.verify(first, nonce: "raw-nonce")

            // A flood of tokens with made-up kids: one fetch per interval, however many tokens.
            clock.advance(61)
            for n in 0..<5 {
                let madeUp = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce", key: .unpublished(kid: "made-up-\(n)"))
                #expect(await refusal(verifier, madeUp) == .unknownKey)
            }
            #expect(apple.jwksFetches == 3, "five unknown kids, one fetch")

            // A rotation that drops the old keys: the cached set still holds them until its
            // max-age (3600 s) has passed; then the fetch drops them.
            try apple.rotate(keepingOld: false)
            clock.advance(61)
            _ = try await verifier.verify(first, nonce: "raw-nonce")
            #expect(apple.jwksFetches == 3)
            clock.advance(3600)
            #expect(await refusal(verifier, first) == .unknownKey)
            #expect(apple.jwksFetches == 4)
        }
    }

    @Test func eachClaimCheckHasItsOwnError() async throws {
        try await withApple { apple, verifier, _ in
            let now = Int64(Date().timeIntervalSince1970)
            func token(_ overriding: [String: AppleStubServer.Claim], removing: Set<String> = []) async throws -> String {
                try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce", overriding: overriding, removing: removing)
            }
            #expect(await refusal(verifier, try await token(["iss": .string("https://appleid.apple.com.evil")])) == .wrongIssuer)
            #expect(await refusal(verifier, try await token(["iss": .string("https://account.apple.com")])) == .wrongIssuer)
            #expect(await refusal(verifier, try await token(["aud": .string("com.example.other")])) == .wrongAudience)
            #expect(await refusal(verifier, try await token(["aud": .strings(["com.example.other"])])) == .wrongAudience)
            #expect(await refusal(verifier, try await token(["exp": .int(now - 61 - 5)])) == .expired)
            #expect(await refusal(verifier, try await token(["iat": .int(now + 61 + 5), "exp": .int(now + 900)])) == .issuedInFuture)
            // Within the leeway both pass.
            _ = try await verifier.verify(try await token(["exp": .int(now - 20), "iat": .int(now + 20)]), nonce: "raw-nonce")

            let honest = try await token([:])
            #expect(await refusal(verifier, honest, nonce: "another-raw-nonce") == .nonceMismatch)
            #expect(await refusal(verifier, honest, nonce: AppleNonce.hash("raw-nonce")) == .nonceMismatch,
                    "the hash given as the raw nonce")
            #expect(await refusal(verifier, try await token([:], removing: ["nonce"])) == .nonceMismatch)
            #expect(await refusal(verifier, try await token(["nonce": .string("raw-nonce")])) == .nonceMismatch,
                    "a raw nonce in the token")
        }
    }

    @Test func malformedTokensAreRefusedAsMalformed() async throws {
        try await withApple { apple, verifier, _ in
            let valid = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce")
            let parts = valid.split(separator: ".").map(String.init)
            func b64(_ json: String) -> String {
                Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                    .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            let kid = try #require(apple.keyIDs.last)
            let cases: [String] = [
                "", "not a jwt", "a.b", "a.b.c", parts[0] + "." + parts[1],
                valid + ".extra",
                [b64(#"{"alg":"none","kid":"\#(kid)"}"#), parts[1], ""].joined(separator: "."),
                [b64(#"{"alg":"HS256","kid":"\#(kid)"}"#), parts[1], parts[2]].joined(separator: "."),
                [b64(#"{"alg":"RS256"}"#), parts[1], parts[2]].joined(separator: "."),
                [parts[0], b64(#"{"iss":"https://appleid.apple.com"}"#), parts[2]].joined(separator: "."),
                [parts[0], b64("[1,2,3]"), parts[2]].joined(separator: "."),
            ]
            for token in cases {
                let error = await refusal(verifier, token)
                guard case .malformed = error else {
                    Issue.record("\(token.prefix(40))…: \(String(describing: error)), expected malformed")
                    continue
                }
            }
            // Signed, but without sub or exp.
            for missing in ["sub", "exp"] {
                let token = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce", removing: [missing])
                #expect(await refusal(verifier, token) == .malformed("claim \(missing) is missing"))
            }
            let badBool = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce", overriding: ["email_verified": .string("yes")])
            guard case .malformed = await refusal(verifier, badBool) else { Issue.record("email_verified 'yes' accepted"); return }
        }
    }

    @Test func theKeySetIsKeptForItsCacheControlMaxAge() async throws {
        try await withApple(cacheControl: "public, max-age=300") { apple, verifier, clock in
            for n in 0..<5 {
                let token = try await apple.identityToken(audience: Self.app, subject: "s\(n)", rawNonce: "raw-nonce")
                _ = try await verifier.verify(token, nonce: "raw-nonce")
                clock.advance(50)
            }
            #expect(apple.jwksFetches == 1, "250 s of sign-ins within max-age=300: one fetch")
            clock.advance(60)   // 310 s: expired
            let token = try await apple.identityToken(audience: Self.app, subject: "later", rawNonce: "raw-nonce")
            _ = try await verifier.verify(token, nonce: "raw-nonce")
            #expect(apple.jwksFetches == 2)
        }
    }

    @Test func signInsArrivingTogetherShareOneFetch() async throws {
        try await withApple { apple, verifier, _ in
            var tokens: [String] = []
            for n in 0..<20 { tokens.append(try await apple.identityToken(audience: Self.app, subject: "s\(n)", rawNonce: "raw-nonce")) }
            let subjects = try await withThrowingTaskGroup(of: String.self) { group in
                for token in tokens { group.addTask { try await verifier.verify(token, nonce: "raw-nonce").subject } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(subjects.count == 20, "every sign-in verified")
            #expect(apple.jwksFetches == 1)
        }
    }

    @Test func anUnreachableKeySetIsKeysUnavailableAndACachedSetOutlivesAnOutage() async throws {
        try await withApple(cacheControl: "max-age=100") { apple, verifier, clock in
            apple.failJWKS(with: .init(status: 503, body: "down"))
            let token = try await apple.identityToken(audience: Self.app, subject: "s", rawNonce: "raw-nonce")
            guard case .keysUnavailable = await refusal(verifier, token) else { Issue.record("not keysUnavailable"); return }
            // Not fetched again within the interval, even with nothing cached.
            guard case .keysUnavailable = await refusal(verifier, token) else { Issue.record("not keysUnavailable"); return }
            #expect(apple.jwksFetches == 1)

            apple.failJWKS(with: nil)
            clock.advance(61)
            _ = try await verifier.verify(token, nonce: "raw-nonce")
            #expect(apple.jwksFetches == 2)

            // Expired and Apple down: the keys held stay in use.
            apple.failJWKS(with: .init(status: 500))
            clock.advance(200)
            _ = try await verifier.verify(token, nonce: "raw-nonce")
            #expect(apple.jwksFetches == 3)
        }
    }

    @Test func aNotificationIsVerifiedWithItsJtiAndEvent() async throws {
        try await withApple { apple, verifier, _ in
            let payload = try await apple.notification(
                audience: Self.app, type: "email-disabled", subject: "001234.abcdef.0001",
                email: "x7k2@privaterelay.appleid.com", isPrivateEmail: true, jwtID: "jti-1")
            let notification = try await verifier.verifyNotification(payload, maxAge: 300)
            #expect(notification.jwtID == "jti-1")
            #expect(notification.clientID == Self.app)
            #expect(notification.event.type == "email-disabled")
            #expect(notification.event.subject == "001234.abcdef.0001")
            #expect(notification.event.email == "x7k2@privaterelay.appleid.com")
            #expect(notification.event.isPrivateEmail == true)
            #expect(notification.event.eventTime != nil)

            let old = try await apple.notification(audience: Self.app, type: "consent-revoked", subject: "s", issuedAt: Date().addingTimeInterval(-3600))
            await #expect(throws: AppleTokenError.stale) { try await verifier.verifyNotification(old, maxAge: 300) }
            let other = try await apple.notification(audience: "com.example.other", type: "account-delete", subject: "s")
            await #expect(throws: AppleTokenError.wrongAudience) { try await verifier.verifyNotification(other, maxAge: 300) }
            let forged = try await apple.notification(audience: Self.app, type: "account-delete", subject: "s", key: .unpublished(kid: apple.keyIDs[0]))
            await #expect(throws: AppleTokenError.badSignature) { try await verifier.verifyNotification(forged, maxAge: 300) }
            let noEvents = try await apple.notification(audience: Self.app, type: "account-delete", subject: "s", overriding: ["events": .string("not json")])
            await #expect(throws: AppleTokenError.malformed("claim events is not an object with type and sub")) {
                try await verifier.verifyNotification(noEvents, maxAge: 300)
            }
        }
    }
}
