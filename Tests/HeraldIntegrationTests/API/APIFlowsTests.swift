import Foundation
import HeraldStubs
import NIOHTTP1
import Synchronization
import Testing
@testable import HeraldApple
@testable import HeraldEmail
@testable import HeraldPush
@testable import HeraldRuntime

/// `/v1`'s email, push, Apple and account routes on the real `herald-api` executable, each
/// flow end to end with its worker in-process: every answer and each refusal.
@Suite(.needsServers) struct APIFlowsTests {
    @Test func anEmailLinkIsSentThenConsumedOnce() async throws {
        try await withHarness { harness in
            let email = try await EmailFixture(harness)
            _ = try await email.start()
            let api = try await APIProcess(harness)
            let to = email.address(1)
            let settings: [String: Any] = ["url": "https://app.example.com/finish?state=a1", "handle_code_in_app": true, "ios_bundle_id": "com.example.ios"]
            let sent = try await api.call(.POST, "/v1/email/actions", json: ["request_id": "\(harness.namespace)-e1", "email": to, "mode": "sign_in",
                                                                           "locale": "en", "action_code_settings": settings])
            #expect(sent.status == 200 && sent.json["request_id"] as? String == "\(harness.namespace)-e1" && sent.json["status"] as? String == "sending"
                    && sent.json["channel"] as? String == "email", "\(sent)")
            try await eventually("the link delivered") { !email.received(to: to).isEmpty }
            let code = try #require(email.received(to: to).first?.query("oobCode"))

            let mismatch = try await api.call(.POST, "/v1/email/actions/consume", json: ["email": email.address(2), "oob_code": code])
            #expect(mismatch.status == 200 && mismatch.json["result"] as? String == "email_mismatch", "\(mismatch)")
            let used = try await api.call(.POST, "/v1/email/actions/consume", json: ["email": to, "oob_code": code, "mode": "sign_in"])
            #expect(used.status == 200 && used.json["result"] as? String == "success", "\(used)")
            #expect(used.json["email"] as? String == to && used.json["mode"] as? String == "sign_in")
            #expect(used.json["continue_url"] as? String == "https://app.example.com/finish?state=a1")
            #expect((used.json["settings"] as? [String: Any])?["ios_bundle_id"] as? String == "com.example.ios", "\(used)")
            let again = try await api.call(.POST, "/v1/email/actions/consume", json: ["email": to, "oob_code": code])
            #expect(again.status == 200 && again.json["result"] as? String == "already_used", "\(again)")
            let unknown = try await api.call(.POST, "/v1/email/actions/consume", json: ["email": to, "oob_code": "not-a-code-of-ours"])
            #expect(unknown.status == 404 && unknown.json["result"] as? String == "not_found", "\(unknown)")
            #expect(!unknown.text.contains("not-a-code-of-ours"))
        }
    }

    @Test func emailRefusalsNameTheField() async throws {
        try await withHarness { harness in
            let api = try await APIProcess(harness)
            let settings: [String: Any] = ["url": "https://app.example.com/finish"]
            let to = "user-\(harness.namespace)@example.net"
            let cases: [(String, [String: Any], String)] = [
                ("recover_email is Herald's own", ["email": to, "mode": "recover_email", "action_code_settings": settings], "mode"),
                ("unknown mode", ["email": to, "mode": "magic", "action_code_settings": settings], "mode"),
                ("no settings", ["email": to, "mode": "sign_in"], "action_code_settings"),
                ("unknown setting", ["email": to, "mode": "sign_in", "action_code_settings": ["url": "https://app.example.com/", "dynamic": true]], "action_code_settings.dynamic"),
                ("no url", ["email": to, "mode": "sign_in", "action_code_settings": [String: Any]()], "action_code_settings.url"),
                ("not an address", ["email": "nobody", "mode": "sign_in", "action_code_settings": settings], "email"),
                ("change without the old address", ["email": to, "mode": "verify_and_change_email", "action_code_settings": settings], "old_email"),
            ]
            for (name, json, field) in cases {
                let answer = try await api.call(.POST, "/v1/email/actions", json: json)
                #expect(answer.status == 400 && answer.error["field"] as? String == field, "\(name): \(answer)")
            }
            let consume = try await api.call(.POST, "/v1/email/actions/consume", json: ["email": to])
            #expect(consume.status == 400 && consume.error["field"] as? String == "oob_code", "\(consume)")
            #expect(try await harness.depth(harness.topology.workQueue(.email)) == 0)
        }
    }

    @Test func aPushVerificationIsConfirmedOnceAndATokenRegisteredAgainIsValid() async throws {
        try await withHarness { harness in
            let since: Int64 = 1_790_000_000_000  // 2026-09-21T14:13:20Z
            let dead = Mutex<String>("")
            let push = try await PushFixture(harness) { request in
                request.token == dead.withLock { $0 } ? .init(status: 410, reason: "Unregistered", timestamp: since) : .ok
            }
            _ = try await push.start()
            let api = try await APIProcess(harness)
            let token = push.token(1)
            let started = try await api.call(.POST, "/v1/push/verifications", json: ["device_token": token, "platform": "apns", "app_id": "com.example.herald",
                                                                                  "environment": "production", "timeout_seconds": 300])
            #expect(started.status == 202 && started.json["status"] as? String == "queued", "\(started)")
            let receipt = try #require(started.json["receipt"] as? String)
            try await eventually("the push delivered") { !push.apnsSecrets(token).isEmpty }
            let (pushed, secret) = try #require(push.apnsSecrets(token).last)
            #expect(pushed == receipt)

            let wrong = try await api.call(.POST, "/v1/push/verifications/\(receipt)/confirm", json: ["secret": "not-the-secret"])
            #expect(wrong.status == 200 && wrong.json["result"] as? String == "mismatch", "\(wrong)")
            let confirmed = try await api.call(.POST, "/v1/push/verifications/\(receipt)/confirm", json: ["secret": secret])
            #expect(confirmed.status == 200 && confirmed.json["result"] as? String == "verified", "\(confirmed)")
            #expect(confirmed.json["app_id"] as? String == "com.example.herald" && confirmed.json["platform"] as? String == "apns")
            let again = try await api.call(.POST, "/v1/push/verifications/\(receipt)/confirm", json: ["secret": secret])
            #expect(again.json["result"] as? String == "already_used", "\(again)")
            let unknown = try await api.call(.POST, "/v1/push/verifications/\(harness.namespace)-none/confirm", json: ["secret": secret])
            #expect(unknown.status == 404 && unknown.json["result"] as? String == "not_found", "\(unknown)")
            #expect(![wrong, confirmed, again, unknown].contains { $0.text.contains(secret) })

            // A token APNs called unregistered since 2026-09-21: registered before that changes
            // nothing; registered now makes it valid again, once.
            let other = push.token(2)
            dead.withLock { $0 = other }
            let refused = try await api.call(.POST, "/v1/push/verifications", json: ["device_token": other, "platform": "apns", "app_id": "com.example.herald"])
            try await eventually("the token marked invalid") { try await push.health(other)?.status == "invalid" }
            #expect(refused.status == 202)
            let older = try await api.call(.POST, "/v1/push/device-tokens", json: ["platform": "apns", "token": other, "registered_at": "2026-09-01T00:00:00Z"])
            #expect(older.status == 200 && older.json["changed"] as? Bool == false, "\(older)")
            let now = try await api.call(.POST, "/v1/push/device-tokens", json: ["platform": "apns", "token": other])
            #expect(now.status == 200 && now.json["changed"] as? Bool == true, "\(now)")
            #expect(try await push.health(other)?.status == "valid")
            let twice = try await api.call(.POST, "/v1/push/device-tokens", json: ["platform": "apns", "token": other])
            #expect(twice.json["changed"] as? Bool == false, "\(twice)")

            let refusals: [(String, String, [String: Any], String)] = [
                ("platform", "/v1/push/verifications", ["device_token": token, "platform": "windows", "app_id": "a"], "platform"),
                ("timeout", "/v1/push/verifications", ["device_token": token, "platform": "apns", "app_id": "a", "timeout_seconds": 0], "timeout_seconds"),
                ("no app", "/v1/push/verifications", ["device_token": token, "platform": "apns"], "app_id"),
                ("time", "/v1/push/device-tokens", ["platform": "fcm", "token": token, "registered_at": "yesterday"], "registered_at"),
                ("secret", "/v1/push/verifications/\(receipt)/confirm", ["secret": 42], "secret"),
            ]
            for (name, path, json, field) in refusals {
                let answer = try await api.call(.POST, path, json: json)
                #expect(answer.status == 400 && answer.error["field"] as? String == field, "\(name): \(answer)")
            }
        }
    }

    /// An identity token checked with its raw nonce; an authorization code stored through
    /// herald-apple; the account deleted (its token revoked at Apple, `account.deleted` out).
    @Test func appleSignInThenDeletingTheAccount() async throws {
        try await withHarness { harness in
            let apple = try await AppleTokenFixture(harness)
            let accountEvents = try await EventTap(harness, channel: "account")
            _ = try await apple.start()
            let api = try await APIProcess(harness, environment: ["HERALD_APPLE_CLIENT_IDS": apple.clientID, "HERALD_APPLE_JWKS_URL": apple.apple.jwksURL])
            let (account, subject) = try await apple.account(1)

            let token = try await apple.apple.identityToken(audience: apple.clientID, subject: subject, rawNonce: "n-1", email: "x7k2@privaterelay.appleid.com", isPrivateEmail: true)
            let verified = try await api.call(.POST, "/v1/apple/identity-tokens/verify", json: ["identity_token": token, "raw_nonce": "n-1"])
            #expect(verified.status == 200 && verified.json["result"] as? String == "verified", "\(verified)")
            #expect(verified.json["sub"] as? String == subject && verified.json["client_id"] as? String == apple.clientID)
            #expect(verified.json["email"] as? String == "x7k2@privaterelay.appleid.com" && verified.json["is_private_email"] as? Bool == true)
            let replayed = try await api.call(.POST, "/v1/apple/identity-tokens/verify", json: ["identity_token": token, "raw_nonce": "n-2"])
            #expect(replayed.status == 200 && replayed.json["result"] as? String == "refused" && replayed.json["reason"] as? String != nil, "\(replayed)")
            let foreign = try await apple.apple.identityToken(audience: "com.example.other", subject: subject, rawNonce: "n-1")
            let other = try await api.call(.POST, "/v1/apple/identity-tokens/verify", json: ["identity_token": foreign, "raw_nonce": "n-1"])
            #expect(other.json["result"] as? String == "refused" && other.json["reason"] as? String != replayed.json["reason"] as? String, "\(other)")
            #expect(![verified, replayed, other].contains { $0.text.contains(token) || $0.text.contains(foreign) })

            let code = try await apple.endpoints.issueCode(subject: subject, clientID: apple.clientID)
            let stored = try await api.call(.POST, "/v1/apple/authorization-codes", json: ["account_id": account, "client_id": apple.clientID, "authorization_code": code])
            #expect(stored.status == 202 && !stored.text.contains(code), "\(stored)")
            let messageID = try #require(stored.json["message_id"] as? String)
            try await eventually("the token stored") { try await harness.ledger(messageID)?.0 == "completed" }
            #expect(try await apple.tokenRow(account) != nil)
            let missing = try await api.call(.POST, "/v1/apple/authorization-codes", json: ["account_id": account, "authorization_code": code])
            #expect(missing.status == 400 && missing.error["field"] as? String == "client_id", "\(missing)")

            let deleted = try await api.call(.DELETE, "/v1/accounts/\(account)")
            #expect(deleted.status == 200 && deleted.json["deleted"] as? Bool == true && deleted.json["account_id"] as? String == account, "\(deleted)")
            try await eventually("revoked at Apple") { apple.endpoints.revocations == 1 }
            try await eventually("the token deleted") { try await apple.tokenRow(account) == nil }
            let events = try await accountEvents.take(atLeast: 1)
            #expect(events.map(\.0) == ["account.deleted"] && events.first?.1["account_id"] as? String == account)
            let again = try await api.call(.DELETE, "/v1/accounts/\(account)")
            #expect(again.status == 404 && again.error["code"] as? String == "not_found", "\(again)")
            let long = try await api.call(.DELETE, "/v1/accounts/" + String(repeating: "a", count: 129))
            #expect(long.status == 400 && long.error["field"] as? String == "id", "\(long)")
            let appleOnly = try await api.makeKey("apple", scopes: [.apple])
            #expect(try await api.call(.DELETE, "/v1/accounts/\(account)", auth: .basic(appleOnly)).status == 403)
        }
    }
}
