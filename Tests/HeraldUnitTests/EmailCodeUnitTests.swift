import AMQP
import Foundation
@testable import HeraldEmail
@testable import HeraldEmailCheck
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// The parts of `email.code` that need no server: the queue's two job types, the job's
/// validation (the field named), the `email.code.*` keys (the key named), the code templates in
/// every locale (the code in the bodies, never in the subject, masked for the dev outbox) and the
/// hash's binding to address and purpose.
@Suite struct EmailCodeUnitTests {
    let decoder = JobDecoder<EmailJob>(maxBytes: 4096)

    func decode(_ body: String, type: String = EmailCodeJob.typeName) -> Result<EmailJob, JobValidationError> {
        decoder.decode(body: Array(body.utf8), properties: JobEnvelope(messageID: "m-1", typeName: type).properties()).map(\.1)
    }

    func reason(_ body: String, type: String = EmailCodeJob.typeName) -> String? {
        if case .failure(let error) = decode(body, type: type) { return error.reason }
        return nil
    }

    @Test func theEmailQueueReadsBothJobTypes() throws {
        let code = #"{"version":1,"verification_id":"v-1","email":"Ana@Example.COM","purpose":"mfa_sign_in","locale":"fr","force_resend":true,"extra":1}"#
        #expect(try decode(code).get() == .code(EmailCodeJob(verificationID: "v-1", email: "Ana@Example.COM", purpose: .mfaSignIn, locale: "fr", forceResend: true)))
        let action = #"{"version":1,"request_id":"r-1","email":"a@example.com","mode":"sign_in","action_code_settings":{"url":"https://x.example/","handle_code_in_app":true}}"#
        guard case .action(let job) = try decode(action, type: EmailActionJob.typeName).get() else {
            Issue.record("email.action.v1 was not read as an action")
            return
        }
        #expect(job.requestID == "r-1")
        // An action body read as a code job: the code job's schema applies.
        #expect(reason(action)?.hasPrefix("missing required field") == true)
        #expect(reason(code, type: "sms.verification.v1")?.hasPrefix("unknown job type 'sms.verification.v1' for this queue") == true)
        #expect(EmailWorker.jobTypes.map { $0.typeName } == ["email.action.v1", "email.code.v1"])
    }

    @Test func aMalformedCodeJobNamesItsField() {
        let base = #"{"version":1,"verification_id":"v-1","email":"a@example.com","purpose":"sign_in""#
        let cases: [(String, String)] = [
            (#"{"version":1,"email":"a@example.com","purpose":"sign_in"}"#, "verification_id"),
            (#"{"version":1,"verification_id":"v 1","email":"a@example.com","purpose":"sign_in"}"#, "verification_id"),
            (#"{"version":1,"verification_id":"v-1","purpose":"sign_in"}"#, "email"),
            (#"{"version":1,"verification_id":"v-1","email":"a@b","purpose":"sign_in"}"#, "email"),
            (#"{"version":1,"verification_id":"v-1","email":"a@example.com"}"#, "purpose"),
            (#"{"version":1,"verification_id":"v-1","email":"a@example.com","purpose":"reset_password"}"#, "purpose"),
            (base + #","locale":"e"}"#, "locale"),
            (base + #","client":{"ip":"10.0.0.300"}}"#, "client.ip"),
            (base + #","code_length":3}"#, "code_length"),
            (base + #","code_length":11}"#, "code_length"),
            (base + #","code_ttl_seconds":59}"#, "code_ttl_seconds"),
            (base + #","code_ttl_seconds":86401}"#, "code_ttl_seconds"),
            (base + #","force_resend":"yes"}"#, "force_resend"),
        ]
        for (body, field) in cases {
            let refused = reason(body)
            #expect(refused?.contains(field) == true, "\(body): \(refused ?? "accepted")")
        }
        #expect(reason(base + #","code_length":4,"code_ttl_seconds":60,"client":{"ip":"2001:db8::1"}}"#) == nil)
    }

    @Test func theCodeKeysAreReadAndABadOneNamesItsKey() throws {
        let defaults = try HeraldConfiguration(every: ConfigSource(values: [:])).email.code
        #expect(defaults == EmailConfiguration.Code())
        #expect(defaults.length == 6 && defaults.ttlSeconds == 600 && defaults.maxAttempts == 5 && defaults.guessing.maxFailures == 10)
        let source = ConfigSource(values: [:], environment: [
            "HERALD_EMAIL_CODE_LENGTH": "8", "HERALD_EMAIL_CODE_TTL_SECONDS": "120", "HERALD_EMAIL_CODE_MAX_ATTEMPTS": "3",
            "HERALD_EMAIL_CODE_RESEND_INTERVAL_SECONDS": "0", "HERALD_EMAIL_CODE_GUESSING_MAX_FAILURES": "4",
            "HERALD_EMAIL_CODE_GUESSING_LOCKOUT_SECONDS": "60", "HERALD_EMAIL_CODE_GUESSING_MAX_LOCKOUT_SECONDS": "600",
        ])
        let configured = try HeraldConfiguration(every: source).email.code
        #expect(configured.length == 8 && configured.ttlSeconds == 120 && configured.maxAttempts == 3 && configured.resendIntervalSeconds == 0)
        #expect(configured.guessing.maxFailures == 4 && configured.guessing.lockoutSeconds == 60 && configured.guessing.maxLockoutSeconds == 600)
        let bad: [(String, String, String)] = [
            ("HERALD_EMAIL_CODE_LENGTH", "3", "email.code.length"), ("HERALD_EMAIL_CODE_LENGTH", "11", "email.code.length"),
            ("HERALD_EMAIL_CODE_TTL_SECONDS", "59", "email.code.ttl_seconds"), ("HERALD_EMAIL_CODE_MAX_ATTEMPTS", "0", "email.code.max_attempts"),
            ("HERALD_EMAIL_CODE_RESEND_INTERVAL_SECONDS", "-1", "email.code.resend_interval_seconds"),
            ("HERALD_EMAIL_CODE_GUESSING_MAX_FAILURES", "0", "email.code.guessing.max_failures"),
            ("HERALD_EMAIL_CODE_GUESSING_MAX_LOCKOUT_SECONDS", "10", "email.code.guessing.max_lockout_seconds"),
        ]
        for (variable, value, key) in bad {
            let error = #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: [:], environment: [variable: value])) }
            #expect(error?.key == key, "\(variable)=\(value)")
        }
    }

    @Test func theCodeEmailIsLocalisedAndCarriesTheCodeOnlyInItsBodies() throws {
        let templates = try EmailTemplates.load(directory: EmailUnitTests.templatesDirectory, appName: "Acme")
        let code = Secret("493027")
        for (locale, expected, subject) in [("de-AT", "de", "Ihr Bestätigungscode für Acme"), ("fr", "fr", "Votre code de vérification Acme"),
                                            ("pt-BR", "default", "Your Acme verification code"), (nil, "default", "Your Acme verification code")] {
            let (rendered, masked) = templates.renderCode(locale: locale, email: "ana@example.com", code: code, expiresSeconds: 600)
            #expect(rendered.locale == expected)
            #expect(rendered.subject == subject)
            #expect(rendered.text.revealed.contains("\n493027\n"), "\(expected): the code on a line of its own")
            #expect(rendered.text.revealed.contains("10"), "\(expected): the lifetime in minutes")
            #expect(rendered.html.revealed.contains(">493027<"))
            #expect(!masked.contains("493027") && masked.contains("******"), "\(expected): masked for the dev outbox")
        }
    }

    @Test func codeTemplatesMustCarryTheCodeAndKeepItOutOfTheSubject() throws {
        let directory = NSTemporaryDirectory() + "herald-code-templates-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: EmailUnitTests.templatesDirectory, toPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let subject = directory + "/fr.code.subject.mustache"
        try "{{{code}}} est votre code".write(toFile: subject, atomically: true, encoding: .utf8)
        let leaky = #expect(throws: ConfigError.self) { try EmailTemplates.load(directory: directory, appName: "Acme") }
        #expect(leaky?.reason.contains("must not contain the code") == true)
        try "Votre code".write(toFile: subject, atomically: true, encoding: .utf8)
        try "Bonjour".write(toFile: directory + "/fr.code.txt.mustache", atomically: true, encoding: .utf8)
        let empty = #expect(throws: ConfigError.self) { try EmailTemplates.load(directory: directory, appName: "Acme") }
        #expect(empty?.reason.contains("does not contain the code") == true)
        for part in ["subject", "txt", "html"] { try FileManager.default.removeItem(atPath: directory + "/default.code.\(part).mustache") }
        try FileManager.default.removeItem(atPath: directory + "/fr.code.txt.mustache")
        try FileManager.default.removeItem(atPath: subject)
        try FileManager.default.removeItem(atPath: directory + "/fr.code.html.mustache")
        let missing = #expect(throws: ConfigError.self) { try EmailTemplates.load(directory: directory, appName: "Acme") }
        #expect(missing?.reason.contains("default.code.") == true)
    }

    @Test func theHashIsBoundToAddressPurposeAndTenant() throws {
        let hasher = SecretHasher(keyRing: try KeyRing.parse("k1:" + Data(repeating: 7, count: 32).base64EncodedString(), activeKeyID: "k1", key: "secrets.hmac_keys"))
        let code = Secret("123456")
        let stored = hasher.hash(code, context: EmailCodeVerifier.hashContext(email: "a@example.com", purpose: "sign_in", tenant: ""))
        #expect(hasher.verify(code, context: EmailCodeVerifier.hashContext(email: "a@example.com", purpose: "sign_in", tenant: ""), against: stored))
        #expect(!hasher.verify(code, context: EmailCodeVerifier.hashContext(email: "b@example.com", purpose: "sign_in", tenant: ""), against: stored))
        #expect(!hasher.verify(code, context: EmailCodeVerifier.hashContext(email: "a@example.com", purpose: "mfa_sign_in", tenant: ""), against: stored))
        #expect(!hasher.verify(code, context: EmailCodeVerifier.hashContext(email: "a@example.com", purpose: "sign_in", tenant: "VA1"), against: stored))
        #expect(!hasher.verify(Secret("123457"), context: EmailCodeVerifier.hashContext(email: "a@example.com", purpose: "sign_in", tenant: ""), against: stored))
    }
}
