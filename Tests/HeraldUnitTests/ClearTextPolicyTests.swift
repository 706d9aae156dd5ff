import Foundation
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing
import _CryptoExtras

/// "No clear text to remote hosts": `http://` provider URLs, SMTP without TLS and Kannel only
/// on loopback unless `<channel>.allow_insecure_transport` is set; refused naming both keys.
@Suite struct ClearTextPolicyTests {
    @Test(arguments: ["127.0.0.1", "127.255.3.9", "::1", "[::1]", "0:0:0:0:0:0:0:1", "localhost", "LocalHost"])
    func loopbackHosts(host: String) {
        #expect(ClearTextPolicy.isLoopback(host))
    }

    @Test(arguments: ["128.0.0.1", "10.0.0.1", "0.0.0.0", "::", "::2", "::ffff:8.8.8.8", "example.com",
                      "127.0.0.1.example.com", "localhost.example.com", ""])
    func remoteHosts(host: String) {
        #expect(!ClearTextPolicy.isLoopback(host))
    }

    /// One case per URL a channel uses: the values making the provider valid, the URL's key.
    struct Case: Sendable, CustomTestStringConvertible {
        var channel: String
        var key: String
        var values: [String: String]
        var testDescription: String { key }

        func configuration(_ url: String, allow: Bool = false) throws -> HeraldConfiguration {
            var all: [String: Any] = values
            all[key] = url
            if allow { all["\(channel).allow_insecure_transport"] = true }
            return try HeraldConfiguration(every: ConfigSource(values: all))
        }
    }

    static let cases: [Case] = [
        Case(channel: "sms", key: "sms.twilio.base_url", values: [
            "sms.providers": "twilio", "sms.twilio.account_sid": "AC1", "sms.twilio.auth_token": "t", "sms.twilio.from": "+15555550100"]),
        Case(channel: "sms", key: "sms.kannel.url", values: ["sms.providers": "kannel"]),
        Case(channel: "sms", key: "sms.webhook.url", values: ["sms.providers": "webhook", "sms.webhook.secret": "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]),
        Case(channel: "email", key: "email.http_mail.url", values: ["email.providers": "http_mail", "email.http_mail.token": "t"]),
        Case(channel: "push", key: "push.apns.production_host", values: ["push.delivery": "live"]),
        Case(channel: "push", key: "push.apns.sandbox_host", values: ["push.delivery": "live"]),
        Case(channel: "push", key: "push.fcm.send_endpoint", values: ["push.delivery": "live"]),
        Case(channel: "push", key: "push.fcm.token_endpoint", values: ["push.delivery": "live"]),
    ]

    @Test(arguments: cases)
    func aRemoteHTTPURLIsRefusedNamingTheKeys(_ c: Case) throws {
        let error = try #require(throws: ConfigError.self) { try c.configuration("http://provider.example.com/api") }
        #expect(error.key == c.key)
        #expect(error.description.contains("\(c.channel).allow_insecure_transport"))
        // userinfo that looks like loopback does not make the host loopback
        #expect(throws: ConfigError.self) { try c.configuration("http://127.0.0.1@provider.example.com/api") }
    }

    @Test(arguments: cases)
    func loopbackHTTPSAndTheSwitchAreAccepted(_ c: Case) throws {
        for url in ["http://127.0.0.1:8080/api", "http://localhost/api", "http://[::1]:9000/api", "https://provider.example.com/api"] {
            #expect(throws: Never.self, "\(url)") { try c.configuration(url) }
        }
        #expect(throws: Never.self) { try c.configuration("http://provider.example.com/api", allow: true) }
    }

    @Test func onlyTheProvidersInUseAreChecked() throws {
        let sms = try HeraldConfiguration(every: ConfigSource(values: ["sms.providers": "outbox", "sms.kannel.url": "http://kannel.example.com/sendsms"]))
        #expect(sms.sms.kannel.url == "http://kannel.example.com/sendsms")
        _ = try HeraldConfiguration(every: ConfigSource(values: ["push.delivery": "outbox", "push.fcm.send_endpoint": "http://fcm.example.com"]))
    }

    @Test func smtpWithoutTLSOnlyToLoopback() throws {
        func email(_ values: [String: Any]) throws -> EmailConfiguration {
            try HeraldConfiguration(every: ConfigSource(values: ["email.providers": "smtp", "email.smtp.tls": "none"].merging(values) { _, new in new })).email
        }
        let error = try #require(throws: ConfigError.self) { try email(["email.smtp.host": "mail.example.com"]) }
        #expect(error.key == "email.smtp.tls")
        #expect(error.description.contains("email.allow_insecure_transport"))
        #expect(try email(["email.smtp.host": "127.0.0.1"]).smtp.tls == .none)
        #expect(try email(["email.smtp.host": "mail.example.com", "email.allow_insecure_transport": true]).allowInsecureTransport)
        // With TLS any host is fine; a password never goes in clear to a remote host, switch or not.
        _ = try HeraldConfiguration(every: ConfigSource(values: ["email.providers": "smtp", "email.smtp.host": "mail.example.com"]))
        #expect(throws: ConfigError(key: "email.smtp.tls", reason: "AUTH without TLS is allowed only to a loopback relay")) {
            try email(["email.smtp.host": "mail.example.com", "email.allow_insecure_transport": true, "email.smtp.username": "u", "email.smtp.password": "p"])
        }
    }

    @Test func aServiceAccountTokenURIIsChecked() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let json = try JSONSerialization.data(withJSONObject: [
            "client_email": "svc@p.iam.gserviceaccount.com", "private_key": key.pemRepresentation, "token_uri": "http://oauth.example.com/token",
        ])
        let values: [String: Any] = ["push.delivery": "live", "push.fcm.service_account": String(decoding: json, as: UTF8.self)]
        let error = try #require(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: values)) }
        #expect(error.key == "push.fcm.service_account")
        #expect(!error.description.contains("PRIVATE KEY"))
        // An explicit https token endpoint replaces the account's token_uri.
        _ = try HeraldConfiguration(every: ConfigSource(values: values.merging(["push.fcm.token_endpoint": "https://oauth.example.com/token"]) { _, new in new }))
    }
}
