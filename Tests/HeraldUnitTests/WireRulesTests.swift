@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import Testing

/// The wire rule for email addresses: what the email fuzzer found (control characters and
/// bytes that were not UTF-8 passed) stays refused.
@Suite struct WireRulesTests {
    @Test(arguments: ["iacle@exampl\u{0}\u{0}e.com", "a\u{1}b@example.com", "ab@exam\u{7F}ple.com", "ab@exam\u{85}ple.com", "a\u{FFFD}@example.com", "a\r\n@example.com"])
    func controlCharactersAreRefused(_ address: String) {
        #expect(throws: JobValidationError.self) { try WireRules.email(address, field: "email") }
    }

    @Test(arguments: ["alice@example.com", "Ünïcödé@example.com", "a.b+c@sub.example.org"])
    func ordinaryAddressesPass(_ address: String) throws {
        try WireRules.email(address, field: "email")
    }
}
