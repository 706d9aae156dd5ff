@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// `client.ip`: parsed by inet_pton, canonicalised, IPv6 counted per network.
@Suite struct ClientIPTests {
    @Test(arguments: [
        ("203.0.113.7", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("::FFFF:cb00:7107", "203.0.113.7"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("2001:0db8:0000:0001:0000:0000:0000:0000", "2001:db8:0:1::"),
        ("::1", "::1"),
        ("::", "::"),
        ("fe80::1", "fe80::1"),
        // Every IPv6 form of an IPv4 address is that address (issue 34: each was a client of its own).
        ("::203.0.113.7", "203.0.113.7"),
        ("::ffff:0:203.0.113.7", "203.0.113.7"),
        ("64:ff9b::203.0.113.7", "203.0.113.7"),
        ("64:FF9B::cb00:7107", "203.0.113.7"),
        // Near misses stay IPv6: another NAT64 prefix, a non-zero middle.
        ("64:ff9b:1::203.0.113.7", "64:ff9b:1::cb00:7107"),
        ("::1:ffff:0:203.0.113.7", "::1:ffff:0:cb00:7107"),
    ])
    func literalsAreReadInTheirCanonicalForm(_ text: String, _ canonical: String) throws {
        #expect(try ClientIP(text).description == canonical)
    }

    @Test(arguments: ["", " 203.0.113.7", "203.0.113.7 ", "203.0.113", "203.0.113.256", "0x7f.0.0.1", "203.0.113.7/32",
                      "2001:db8::1::2", "2001:db8::g", "fe80::1%eth0", "[2001:db8::1]", "localhost", "1.2.3.4:80",
                      String(repeating: "1", count: 46)])
    func anythingElseIsRefusedNamingTheField(_ text: String) {
        #expect(throws: JobValidationError("client.ip must be an IPv4 or IPv6 address literal")) { try ClientIP(text) }
    }

    @Test func trustedProxyBlocksContainTheirAddressesOnly() throws {
        let block = try #require(CIDRBlock("10.1.0.0/16"))
        #expect(block.contains(try ClientIP("10.1.255.3")))
        #expect(block.contains(try ClientIP("::ffff:10.1.0.9")))
        #expect(!block.contains(try ClientIP("10.2.0.1")))
        #expect(!block.contains(try ClientIP("fd00::1")))
        let six = try #require(CIDRBlock("fd00::/8"))
        #expect(six.contains(try ClientIP("fd12:3456::1")))
        #expect(!six.contains(try ClientIP("fe80::1")))
        #expect(try #require(CIDRBlock("192.0.2.7")).contains(try ClientIP("192.0.2.7")))
        #expect(!(try #require(CIDRBlock("192.0.2.7")).contains(try ClientIP("192.0.2.8"))))
        for bad in ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "example.com", "10.0.0.0/8/8"] { #expect(CIDRBlock(bad) == nil) }
    }

    @Test func ipv6IsCountedPerNetworkAndIPv4PerAddress() throws {
        let a = try ClientIP("2001:db8:1:2:aaaa::1")
        let b = try ClientIP("2001:db8:1:2:ffff:ffff:ffff:ffff")
        let other = try ClientIP("2001:db8:1:3::1")
        #expect(a.limitKey(ipv6PrefixLength: 64) == "2001:db8:1:2::/64")
        #expect(b.limitKey(ipv6PrefixLength: 64) == a.limitKey(ipv6PrefixLength: 64))
        #expect(other.limitKey(ipv6PrefixLength: 64) != a.limitKey(ipv6PrefixLength: 64))
        #expect(other.limitKey(ipv6PrefixLength: 48) == a.limitKey(ipv6PrefixLength: 48))
        #expect(a.limitKey(ipv6PrefixLength: 56) == "2001:db8:1::/56")
        #expect(try ClientIP("2001:db8:1:2:3:4:5:6").limitKey(ipv6PrefixLength: 60) == "2001:db8:1::/60")
        #expect(a.limitKey(ipv6PrefixLength: 128) == "2001:db8:1:2:aaaa::1")
        #expect(try ClientIP("::ffff:198.51.100.9").limitKey(ipv6PrefixLength: 64) == "198.51.100.9")
    }

    @Test func jobsRefuseAMalformedClientIPAndAcceptAGoodOne() throws {
        var sms = SMSVerificationJob(verificationID: "v-1", phoneNumber: "+4915112345678", client: .init(ip: "10.0.0.1/8"))
        #expect(throws: JobValidationError("client.ip must be an IPv4 or IPv6 address literal")) { try sms.validate() }
        sms.client = .init(ip: "2001:db8::1")
        try sms.validate()
        var email = EmailActionJob(requestID: "r-1", email: "a@example.com", mode: .signIn,
                                   actionCodeSettings: .init(url: "https://app.example.com/"), client: .init(ip: "not an ip"))
        #expect(throws: JobValidationError("client.ip must be an IPv4 or IPv6 address literal")) { try email.validate() }
        email.client = .init(ip: "198.51.100.1")
        try email.validate()
    }

    @Test func theLimitKeysAreValidatedAtStart() throws {
        for (key, value) in [("sms.limits.ip.ipv6_prefix", "16"), ("email.limits.ip.ipv6_prefix", "129"),
                             ("sms.guessing.max_failures", "0"), ("sms.guessing.max_failures", "101"),
                             ("email.limits.address.window_seconds", "0")] {
            let variable = "HERALD_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
            #expect(throws: ConfigError.self, "\(key)") { try HeraldConfiguration(every: ConfigSource(path: nil, environment: [variable: value])) }
        }
        let environment = ["HERALD_SMS_GUESSING_LOCKOUT_SECONDS": "600", "HERALD_SMS_GUESSING_MAX_LOCKOUT_SECONDS": "60"]
        #expect(throws: ConfigError(key: "sms.guessing.max_lockout_seconds", reason: "must be at least sms.guessing.lockout_seconds (600)")) {
            try HeraldConfiguration(every: ConfigSource(path: nil, environment: environment))
        }
    }
}
