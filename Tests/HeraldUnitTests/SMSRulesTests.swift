import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// E.164 syntax, SMS lengths, templates and the SMS configuration (libphonenumber's reading:
/// PhoneNumberClassifierTests; the region and type policy: SMSNumberPolicyTests).
@Suite struct SMSRulesTests {
    @Test(arguments: ["+4915112345678", "+14155552671", "+6834002", "+15555550100", "+999999999999999"])
    func e164SyntaxIsAccepted(number: String) throws {
        let phone = try PhoneNumber(number)
        #expect(phone.e164 == number)
        #expect(phone.description == Redact.phone(number))
    }

    @Test(arguments: [
        ("4915112345678", "must start with '+'"),
        ("+49 151 12345678", "digits only"),
        ("+49-15112345678", "digits only"),
        ("+", "digits only"),
        ("+0151123456", "no country calling code starts with 0"),
        ("+441234", "at least 7"),
        ("+4412345678901234", "at most 15"),
        ("+٤٩١٥١١٢٣٤٥٦٧٨", "digits only"),
    ])
    func invalidSyntaxSaysWhy(number: String, reason: String) {
        #expect(throws: JobValidationError.self) { try PhoneNumber(number) }
        do {
            _ = try PhoneNumber(number)
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
            #expect(!error.reason.contains(number.dropFirst()), "the reason must not echo the number")
        }
    }

    @Test func thePrefixDropsTheLastDigits() throws {
        #expect(try PhoneNumber("+4915112345678").prefix(droppingLast: 3) == "+4915112345")
        // Never shorter than four digits, whatever the configured drop.
        #expect(try PhoneNumber("+6834002").prefix(droppingLast: 8) == "+6834")
    }

    @Test func smsLengthIsCountedInGSM7OrUCS2() {
        let short = SMSEncoding("123456 is your code.")
        #expect(short.scheme == .gsm7 && short.units == 20 && short.segments == 1)
        #expect(SMSEncoding(String(repeating: "a", count: 160)).segments == 1)
        #expect(SMSEncoding(String(repeating: "a", count: 161)).segments == 2)
        #expect(SMSEncoding(String(repeating: "a", count: 306)).segments == 2)
        #expect(SMSEncoding(String(repeating: "a", count: 307)).segments == 3)
        // The extension table costs two septets.
        #expect(SMSEncoding("€[]").units == 6)
        #expect(SMSEncoding(String(repeating: "€", count: 80)).segments == 1)
        #expect(SMSEncoding(String(repeating: "€", count: 81)).segments == 2)
        // One character outside GSM-7 makes it UCS-2: 70 per segment, 67 when concatenated.
        #expect(SMSEncoding("Bestätigungscode für").scheme == .gsm7)
        #expect(SMSEncoding("código").scheme == .ucs2)
        #expect(SMSEncoding("ваш код").scheme == .ucs2)
        #expect(SMSEncoding(String(repeating: "ж", count: 70)).segments == 1)
        #expect(SMSEncoding(String(repeating: "ж", count: 71)).segments == 2)
        #expect(SMSEncoding(String(repeating: "ж", count: 135)).segments == 3)
        #expect(SMSEncoding("😀").units == 2)
    }

    static var templatesDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Config/templates/sms").standardized.path
    }

    @Test func localesFallBackFromRegionToLanguageToDefault() throws {
        let templates = try SMSTemplates.load(directory: Self.templatesDirectory, appName: "Acme", webOTPOrigin: "")
        #expect(LocaleFallback.chain("pt_BR") == ["pt-br", "pt", "default"])
        let code = Secret("123456")
        // pt-BR has its own MFA text, but falls back to pt for sign-in.
        #expect(templates.render(purpose: .mfaSignIn, locale: "pt-BR", code: code).locale == "pt-br")
        let signIn = templates.render(purpose: .signIn, locale: "pt-BR", code: code)
        #expect(signIn.locale == "pt")
        #expect(signIn.text.revealed == "123456 é o seu código de verificação do Acme.")
        #expect(signIn.maskedText == "****** é o seu código de verificação do Acme.")
        #expect(templates.render(purpose: .signIn, locale: "xx-YY", code: code).locale == "default")
        #expect(templates.render(purpose: .signIn, locale: nil, code: code).text.revealed == "123456 is your Acme verification code.")
    }

    @Test func everyShippedTextFitsOneSegmentWithTheLongestCode() throws {
        let templates = try SMSTemplates.load(directory: Self.templatesDirectory, appName: "Herald", webOTPOrigin: "")
        for locale in templates.locales.keys {
            for purpose in SMSVerificationJob.Purpose.allCases {
                let rendered = templates.render(purpose: purpose, locale: locale, code: Secret("123456"))
                #expect(rendered.encoding.segments == 1, "\(locale) \(purpose): \(rendered.encoding)")
            }
        }
    }

    @Test func aShortVariantIsUsedWhenTheTextNeedsTwoSegments() throws {
        let templates = try SMSTemplates(locales: [
            "default": ["sign_in": "{code}", "mfa_enroll": "{code}", "mfa_sign_in": "{code}"],
            "ru": ["sign_in": "{code} " + String(repeating: "ж", count: 80), "sign_in_short": "{code} — код {app_name}"],
        ], appName: "Acme")
        let rendered = templates.render(purpose: .signIn, locale: "ru", code: Secret("123456"))
        #expect(rendered.text.revealed == "123456 — код Acme")
        #expect(rendered.encoding.segments == 1)
    }

    @Test func everyPlaceholderIsFilledWhereverItStands() throws {
        let templates = try SMSTemplates(locales: [
            "default": ["sign_in": "{app_name}: {code}. Again: {code} ({app_name})", "mfa_enroll": "{code}", "mfa_sign_in": "x{code}x"],
        ], appName: "Acme")
        let signIn = templates.render(purpose: .signIn, locale: nil, code: Secret("042917"))
        #expect(signIn.text.revealed == "Acme: 042917. Again: 042917 (Acme)")
        #expect(signIn.maskedText == "Acme: ******. Again: ****** (Acme)")
        #expect(templates.render(purpose: .mfaEnroll, locale: "de", code: Secret("1234")).text.revealed == "1234")
        #expect(templates.render(purpose: .mfaSignIn, locale: nil, code: Secret("1234")).text.revealed == "x1234x")
        // The app name is text: a placeholder in it stays as written, the code goes only where the template has it.
        let braces = try SMSTemplates(locales: ["default": ["sign_in": "{app_name}: {code}", "mfa_enroll": "{code}", "mfa_sign_in": "{code}"]],
                                      appName: "A{code}")
        #expect(braces.render(purpose: .signIn, locale: nil, code: Secret("1234")).text.revealed == "A{code}: 1234")
    }

    @Test func aWebhookAnswerNamesItsMessageByMessageIDOrID() throws {
        func id(_ body: String) -> String? {
            (try? JSONDecoder().decode(WebhookProvider.Answer.self, from: Data(body.utf8)))?.name
        }
        #expect(id(#"{"message_id":"m1","id":"i1"}"#) == "m1")
        #expect(id(#"{"id":"i1","status":"queued"}"#) == "i1")
        #expect(id(#"{"message_id":17,"id":"i1"}"#) == "i1", "a member that is not a string counts as missing")
        #expect(id(#"{}"#) == nil)
        #expect(id("accepted") == nil)
    }

    @Test func theWebOTPLineBindsTheCodeToTheOrigin() throws {
        let templates = try SMSTemplates.load(directory: Self.templatesDirectory, appName: "Acme", webOTPOrigin: "login.example.com")
        let rendered = templates.render(purpose: .signIn, locale: "en", code: Secret("654321"))
        #expect(rendered.text.revealed.hasSuffix("\n\n@login.example.com #654321"))
        #expect(rendered.maskedText.hasSuffix("@login.example.com #******"))
    }

    /// Android's SMS Retriever hash of the job's app on a line of its own, before the WebOTP
    /// line (which must stay last); no line for an app without a hash.
    @Test func theAppHashLineComesBeforeTheWebOTPLine() throws {
        let templates = try SMSTemplates.load(directory: Self.templatesDirectory, appName: "Acme", webOTPOrigin: "login.example.com",
                                              appHashes: ["com.example.app": "FA+9qCX9VSu"])
        let rendered = templates.render(purpose: .signIn, locale: "en", code: Secret("654321"), appID: "com.example.app")
        #expect(rendered.text.revealed == "654321 is your Acme verification code.\n\nFA+9qCX9VSu\n\n@login.example.com #654321")
        #expect(rendered.maskedText == "****** is your Acme verification code.\n\nFA+9qCX9VSu\n\n@login.example.com #******")
        #expect(!templates.render(purpose: .signIn, locale: "en", code: Secret("654321"), appID: "com.other.app").text.revealed.contains("FA+9qCX9VSu"))
        #expect(!templates.render(purpose: .signIn, locale: "en", code: Secret("654321")).text.revealed.contains("FA+9qCX9VSu"))
    }

    /// At start, every shipped variant is rendered as a job gets it and counted: one segment each
    /// with the shipped settings; the app hash and WebOTP lines take the UCS-2 texts (es, pt, ru)
    /// to two, and the error says which and why.
    @Test func everyVariantIsCheckedAgainstMaxSegmentsAtStart() throws {
        var sms = SMSConfiguration()
        sms.templatesDirectory = Self.templatesDirectory
        sms.maxSegments = 1
        _ = try SMSTemplates.load(sms)
        sms.webOTPOrigin = "login.example.com"
        sms.androidAppHashes = ["com.example.app": "FA+9qCX9VSu"]
        #expect { try SMSTemplates.load(sms) } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.key == "sms.max_segments" && error.reason.contains("needs 2 segments (UCS-2")
                && error.reason.contains("with a 6-digit code and the app hash and WebOTP lines")
        }
        sms.maxSegments = 2
        _ = try SMSTemplates.load(sms)
        for (values, key) in [(["sms.android_app_hashes": ["com.example.app": "short"]], "sms.android_app_hashes"),
                              (["sms.android_app_hashes": "com.example.app"], "sms.android_app_hashes"),
                              (["sms.max_segments": 0], "sms.max_segments")] as [([String: Any], String)] {
            #expect { try SMSConfiguration(source: ConfigSource(values: values)) } throws: { ($0 as? ConfigError)?.key == key }
        }
        let read = try SMSConfiguration(source: ConfigSource(values: [:], environment: ["HERALD_SMS_ANDROID_APP_HASHES": "com.example.app:FA+9qCX9VSu"]))
        #expect(read.androidAppHashes == ["com.example.app": "FA+9qCX9VSu"])
    }

    /// A region's registration (India's DLT): read per region, each text key's template id
    /// (a locale's own first), and at start every text the templates have must have one.
    @Test func aRegionsRegistrationNamesEveryTextsTemplate() throws {
        let read = try SMSConfiguration(source: ConfigSource(values: [
            "sms.regions.registration.IN.sender": "HERALD", "sms.regions.registration.IN.entity_id": "1101456789012345678",
            "sms.regions.registration.IN.templates.sign_in": "1107000000000000001",
            "sms.regions.registration.IN.templates.hi/sign_in": "1107000000000000009",
        ]))
        let india = try #require(read.registrations["IN"])
        #expect(india.sender == "HERALD" && india.entityID == "1101456789012345678")
        #expect(india.templateID(key: "sign_in", locale: "en") == "1107000000000000001")
        #expect(india.templateID(key: "sign_in", locale: "hi") == "1107000000000000009")
        #expect(read.registration(region: "IN", key: "mfa_enroll", locale: "en") == .init(sender: "HERALD", entityID: "1101456789012345678", templateID: nil))
        #expect(read.registration(region: "DE", key: "sign_in", locale: "en") == nil)
        for (values, key) in [
            (["sms.regions.registration.XX.sender": "A"], "sms.regions.registration.XX"),
            (["sms.regions.registration.IN.sender": "HER ALD"], "sms.regions.registration.IN.sender"),
            (["sms.regions.registration.IN.templates.sign_in": ""], "sms.regions.registration.IN.templates.sign_in"),
            (["sms.regions.registration.IN.entityid": "1101"], "sms.regions.registration.IN.entityid"),
            (["sms.regions.registration.IN.entity_id": "1101"], "sms.regions.registration.IN.templates"),
        ] as [([String: Any], String)] {
            #expect { try SMSConfiguration(source: ConfigSource(values: values)) } throws: { ($0 as? ConfigError)?.key == key }
        }
        // At start: the shipped texts (en's sign_in, es's mfa_enroll_short, …) each need an id.
        var sms = read
        sms.templatesDirectory = Self.templatesDirectory
        #expect { try SMSTemplates.load(sms) } throws: { error in
            (error as? ConfigError)?.key == "sms.regions.registration.IN.templates" && "\(error)".contains("no template id for de.yaml's mfa_enroll (give 'mfa_enroll' or 'de/mfa_enroll')")
        }
        let keys = Set(try SMSTemplates.load(directory: Self.templatesDirectory, appName: "A", webOTPOrigin: "").textKeys.map(\.1))
        for key in keys { sms.registrations["IN"]?.templates[key] = "1107" + String(key.count) }
        _ = try SMSTemplates.load(sms)
        // The key a job's text was rendered from: the short variant's when it is used.
        let templates = try SMSTemplates(locales: [
            "default": ["sign_in": "{code}", "mfa_enroll": "{code}", "mfa_sign_in": "{code}"],
            "ru": ["sign_in": "{code} " + String(repeating: "ж", count: 80), "sign_in_short": "{code} — код"],
        ], appName: "Acme")
        #expect(templates.render(purpose: .signIn, locale: "ru", code: Secret("123456")).key == "sign_in_short")
        #expect(templates.render(purpose: .signIn, locale: "de", code: Secret("123456")).key == "sign_in")
    }

    @Test func badTemplatesAreConfigurationErrors() {
        #expect(throws: ConfigError.self) { try SMSTemplates(locales: ["en": ["sign_in": "{code}"]], appName: "A") }
        #expect(throws: ConfigError.self) {
            try SMSTemplates(locales: ["default": ["sign_in": "no code here", "mfa_enroll": "{code}", "mfa_sign_in": "{code}"]], appName: "A")
        }
        #expect(throws: ConfigError.self) {
            try SMSTemplates(locales: ["default": ["sign_in": "{code} {user}", "mfa_enroll": "{code}", "mfa_sign_in": "{code}"]], appName: "A")
        }
    }

    @Test func smsConfigurationFromEnvironment() throws {
        let source = ConfigSource(values: [:], environment: [
            "HERALD_SMS_TEST_NUMBERS": "+15555550100:123456, +4915112345678:654321",
            "HERALD_SMS_REGIONS_ALLOW": "DE,US",
            "HERALD_SMS_LIMITS_PHONE_MAX": "3",
            "HERALD_SMS_PROVIDERS": "kannel,outbox",
        ])
        let sms = try HeraldConfiguration(every: source).sms
        #expect(sms.testNumbers == ["+15555550100": "123456", "+4915112345678": "654321"])
        #expect(sms.regions == .init(mode: .allow, regions: ["DE", "US"]))
        #expect(sms.phoneLimit == .init(max: 3, windowSeconds: 3600))
        #expect(sms.providers == [.kannel, .outbox])
        #expect(sms.regions.permits("DE") && sms.regions.permits("US"))
        #expect(!sms.regions.permits("FR") && !sms.regions.permits("JM"))
    }

    @Test(arguments: [
        ["HERALD_SMS_PROVIDERS": "carrier-pigeon"],
        ["HERALD_SMS_PROVIDERS": "twilio"],
        ["HERALD_SMS_PROVIDERS": "webhook"],
        ["HERALD_SMS_REGIONS_CALLING_CODES": "28"],
        ["HERALD_SMS_REGIONS_ALLOW": "XX"],
        ["HERALD_SMS_NUMBER_TYPES_ALLOW": "mobile,landline"],
        ["HERALD_SMS_TEST_NUMBERS": "+15555550100:12"],
        ["HERALD_SMS_TEST_NUMBERS": "+0123:123456"],
    ])
    func badSMSConfigurationNamesTheKey(environment: [String: String]) {
        #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: [:], environment: environment)) }
    }

    @Test func theKeyRingIsRequiredAndNeverEchoed() throws {
        #expect(throws: ConfigError.self) { try SecretsConfiguration().keyRing() }
        let key = Data(repeating: 7, count: 32).base64EncodedString()
        let ring = try SecretsConfiguration(hmacKeys: "new:\(key),old:\(key)").keyRing()
        #expect(ring.activeKeyID == "new")
        do {
            _ = try SecretsConfiguration(hmacKeys: "k:c2hvcnQ=").keyRing()
        } catch {
            #expect(!"\(error)".contains("c2hvcnQ="))
        }
    }
}
