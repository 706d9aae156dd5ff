import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// Continue URLs an attacker might slip into `action_code_settings.url` (open redirects,
/// phishing through a link on our domain): each is refused with a reason that names the rule.
@Suite struct EmailURLSafetyTests {
    static let policy = EmailLinkPolicy(
        authorizedDomains: ["app.example.com", "*.example.org", "localhost"],
        linkDomains: ["example.page.link", "auth.example.com"], defaultLinkDomain: "auth.example.com")

    /// (URL, a word the reason must contain).
    static let malicious: [(String, String)] = [
        // Other schemes.
        ("javascript:alert(1)", "scheme"),
        ("JavaScript:alert(document.cookie)", "scheme"),
        ("javascript://app.example.com/%0aalert(1)", "scheme"),
        ("data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==", "scheme"),
        ("vbscript:msgbox(1)", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("ftp://app.example.com/x", "scheme"),
        ("intent://app.example.com#Intent;scheme=http;end", "scheme"),
        ("//evil.com/path", "scheme"),
        ("app.example.com/path", "scheme"),
        ("http://app.example.com/", "scheme"),
        ("https:app.example.com", "scheme"),
        ("https:/app.example.com", "scheme"),
        // Hosts not on the list, look-alikes.
        ("https://evil.com/", "authorized"),
        ("https://app.example.com.evil.com/", "authorized"),
        ("https://evilapp.example.com/", "authorized"),
        ("https://app-example.com/", "authorized"),
        ("https://app.example.co/", "authorized"),
        ("https://app.examp1e.com/", "authorized"),
        ("https://example.com/", "authorized"),
        ("https://example.org/", "authorized"),
        ("https://xn--pp-zxa.example.com/", "authorized"),
        ("https://app.example.com.", "host"),
        ("https://app.example.com./x", "host"),
        ("https://127.0.0.1/", "authorized"),
        ("https://2130706433/", "authorized"),
        ("https://[::1]/", "port"),
        ("https://0x7f.0.0.1/", "authorized"),
        // Non-ASCII look-alikes (Cyrillic а, fullwidth dot, zero-width space).
        ("https://аpp.example.com/", "ASCII"),
        ("https://app.example。com/", "ASCII"),
        ("https://app.example.com\u{200B}.evil.com/", "ASCII"),
        ("https://app.exаmple.com/", "ASCII"),
        // User info tricks.
        ("https://app.example.com@evil.com/", "user info"),
        ("https://app.example.com:443@evil.com/", "user info"),
        ("https://user:pass@app.example.com/", "user info"),
        ("https://evil.com@app.example.com/", "user info"),
        ("https://app.example.com%40evil.com/", "percent"),
        // Backslashes (browsers read them as slashes).
        ("https://evil.com\\@app.example.com/", "backslash"),
        ("https://app.example.com\\.evil.com/", "backslash"),
        ("https:\\\\evil.com", "backslash"),
        ("https://evil.com\\app.example.com", "backslash"),
        // Percent-encoded hosts.
        ("https://%61pp.example.com/", "percent"),
        ("https://app.example.com%2eevil.com/", "percent"),
        ("https://evil.com%2fapp.example.com/", "percent"),
        ("https://app%2Eexample%2Ecom/", "percent"),
        // Control characters, spaces, tabs, newlines (header and parser tricks).
        ("https://app.example.com/\r\nLocation: https://evil.com", "ASCII"),
        ("https://app.example.com/\npath", "ASCII"),
        ("https://app.example.com/\tx", "ASCII"),
        ("https://evil.com /app.example.com", "ASCII"),
        ("https://app.example.com\u{0000}.evil.com/", "ASCII"),
        (" https://app.example.com/", "ASCII"),
        // Characters URLs do not allow (HTML/attribute injection in the message).
        ("https://app.example.com/\"><script>alert(1)</script>", "character"),
        ("https://app.example.com/'onmouseover='alert(1)", "character"),
        ("https://app.example.com/<img>", "character"),
        ("https://app.example.com/{{link}}", "character"),
        ("https://app.example.com/`x`", "character"),
        // Ports, empty hosts, malformed escapes.
        ("https://app.example.com:99999/", "port"),
        ("https://app.example.com:0/", "port"),
        ("https://app.example.com:/", "port"),
        ("https://app.example.com:80:80/", "valid host"),
        ("https:///app.example.com", "no host"),
        ("https://", "no host"),
        ("https://?x=app.example.com", "no host"),
        ("https://app.example.com/%zz", "percent"),
        ("https://app.example.com/%", "percent"),
        ("https://-app.example.com/", "valid host"),
        ("https://app..example.com/", "host"),
        ("https://.example.org/", "host"),
        ("https://x.example.org_evil.com/", "host"),
        ("https://*.example.org/", "host"),
        // Too long.
        ("https://app.example.com/" + String(repeating: "a", count: 2100), "2048"),
        ("", "2048"),
        // http is for localhost only; a host that merely starts with localhost is not it.
        ("http://localhost.evil.com/", "scheme"),
        ("http://evil.com/?localhost", "scheme"),
    ]

    @Test func everyMaliciousContinueURLIsRefusedWithItsReason() {
        #expect(Self.malicious.count >= 50)
        for (url, word) in Self.malicious {
            var settings = EmailActionJob.ActionCodeSettings(url: url)
            settings.linkDomain = nil
            do {
                let approved = try Self.policy.approve(settings)
                Issue.record("accepted \(url.debugDescription) as \(approved.continueHost)")
            } catch {
                #expect(error.reason.lowercased().contains(word.lowercased()), "\(url.debugDescription): \(error.reason)")
                #expect(!error.reason.contains(url) || url.isEmpty, "the reason never echoes the URL")
            }
        }
    }

    @Test func authorizedURLsPass() throws {
        let good = [
            ("https://app.example.com/finish?state=abc&x=%20y#frag", "app.example.com"),
            ("HTTPS://APP.EXAMPLE.COM/Finish", "app.example.com"),
            ("https://app.example.com:8443/", "app.example.com"),
            ("https://a.example.org/", "a.example.org"),
            ("https://deep.sub.example.org/p", "deep.sub.example.org"),
            ("http://localhost:3000/done", "localhost"),
        ]
        for (url, host) in good {
            let approved = try Self.policy.approve(.init(url: url))
            #expect(approved.continueHost == host)
            #expect(approved.continueURL == url)
            #expect(approved.linkDomain == "auth.example.com")
        }
    }

    @Test func linkDomainsMustBeConfigured() throws {
        var settings = EmailActionJob.ActionCodeSettings(url: "https://app.example.com/")
        settings.linkDomain = "Example.Page.Link"
        #expect(try Self.policy.approve(settings).linkDomain == "example.page.link")
        for bad in ["evil.com", "example.page.link.evil.com", "auth.example.com@evil.com", "auth.example.com/", "", "auth.example.com:443"] {
            settings.linkDomain = bad
            #expect(throws: EmailLinkPolicy.Refusal.self) { try Self.policy.approve(settings) }
        }
    }

    @Test func appIdentifiersAreChecked() throws {
        var settings = EmailActionJob.ActionCodeSettings(url: "https://app.example.com/", iosBundleID: "com.example.ios",
                                                        androidPackageName: "com.example.android", androidMinimumVersion: "12")
        _ = try Self.policy.approve(settings)
        settings.iosBundleID = "com.example\"><script>"
        #expect(throws: EmailLinkPolicy.Refusal.self) { try Self.policy.approve(settings) }
        settings.iosBundleID = nil
        settings.androidPackageName = "nodots"
        #expect(throws: EmailLinkPolicy.Refusal.self) { try Self.policy.approve(settings) }
        settings.androidPackageName = nil
        settings.androidMinimumVersion = "1 OR 1=1"
        #expect(throws: EmailLinkPolicy.Refusal.self) { try Self.policy.approve(settings) }
    }
}
