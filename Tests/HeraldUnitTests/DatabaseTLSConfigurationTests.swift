import Foundation
import Logging
import Testing
@testable import HeraldRuntime

/// `database.tls` and `database.tls_ca_file`: the checks a worker makes at start.
@Suite struct DatabaseTLSConfigurationTests {
    private func load(_ environment: [String: String]) throws -> DatabaseConfiguration {
        try HeraldConfiguration(every: ConfigSource(path: nil, environment: environment)).database
    }

    private func refusal(_ environment: [String: String]) -> ConfigError? {
        do {
            _ = try load(environment)
            return nil
        } catch let error as ConfigError {
            return error
        } catch {
            Issue.record("not a ConfigError: \(error)")
            return nil
        }
    }

    @Test func requireIsTheDefaultAndAllowsAnyHost() throws {
        #expect(DatabaseConfiguration().tls == .require)
        let configuration = try load(["HERALD_DATABASE_URL": "postgres://herald@db.example.com:5432/herald"])
        #expect(configuration.tls == .require)
        #expect(configuration.tlsCAFile == "")
    }

    @Test func aDowngradableModeIsRefusedForARemoteHostNamingTheKey() {
        for mode in ["prefer", "disable"] {
            for host in ["db.example.com", "10.0.0.5", "[2001:db8::1]", "localhost.example.com", "127.0.0.1.example.com", "128.0.0.1"] {
                let error = refusal(["HERALD_DATABASE_URL": "postgres://herald@\(host):5432/herald", "HERALD_DATABASE_TLS": mode])
                #expect(error?.key == "database.tls", "\(mode) \(host)")
                #expect(error?.reason.contains("phone numbers, email addresses and verification results") == true, "\(mode) \(host)")
                #expect(error?.reason.contains("'\(mode)'") == true)
            }
        }
    }

    @Test func loopbackMayUseEveryMode() throws {
        for host in ["127.0.0.1", "127.10.0.3", "localhost", "LOCALHOST", "[::1]"] {
            for mode in DatabaseConfiguration.TLSMode.allCases {
                let configuration = try load(["HERALD_DATABASE_URL": "postgres://herald@\(host):55432/herald", "HERALD_DATABASE_TLS": mode.rawValue])
                #expect(configuration.tls == mode)
            }
        }
    }

    @Test func theSameCheckGuardsAConfigurationBuiltInCode() {
        var configuration = DatabaseConfiguration(url: "postgres://herald@db.example.com/herald")
        configuration.tls = .prefer
        #expect(throws: ConfigError.self) { try Database.makeClient(configuration, logger: Logger(label: "test")) }
    }

    @Test func aMissingOrUnreadableCAFileNamesTheKey() throws {
        let missing = refusal(["HERALD_DATABASE_URL": "postgres://herald@db.example.com/herald",
                               "HERALD_DATABASE_TLS_CA_FILE": "/nonexistent/herald-ca.pem"])
        #expect(missing?.key == "database.tls_ca_file")
        #expect(missing?.reason.contains("/nonexistent/herald-ca.pem") == true)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-not-a-ca-\(UUID()).pem").path
        try "not a certificate\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let garbage = refusal(["HERALD_DATABASE_URL": "postgres://herald@db.example.com/herald", "HERALD_DATABASE_TLS_CA_FILE": path])
        #expect(garbage?.key == "database.tls_ca_file")
    }

    @Test func aCAFileIsLoadedAsTheOnlyTrustRoot() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-ca-\(UUID()).pem").path
        try Self.selfSignedPEM.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try load(["HERALD_DATABASE_URL": "postgres://herald@db.example.com/herald", "HERALD_DATABASE_TLS_CA_FILE": path])
        #expect(configuration.tlsCAFile == path)
        let tls = try configuration.tlsConfiguration()
        #expect(tls.certificateVerification == .fullVerification)
        guard case .certificates(let roots)? = tls.trustRoots else {
            Issue.record("trust roots: \(String(describing: tls.trustRoots))")
            return
        }
        #expect(roots.count == 1)
    }

    @Test func sslmodeInTheURLIsRefusedNotIgnored() {
        let error = refusal(["HERALD_DATABASE_URL": "postgres://herald@db.example.com/herald?sslmode=disable"])
        #expect(error?.key == "database.url")
        #expect(error?.reason.contains("database.tls") == true)
    }

    /// A throwaway self-signed certificate (CN=herald-test), only parsed here.
    static let selfSignedPEM = """
    -----BEGIN CERTIFICATE-----
    MIIBgTCCASegAwIBAgIUQIIb5gruRhQmTQbE4hhJgvWDq44wCgYIKoZIzj0EAwIw
    FjEUMBIGA1UEAwwLaGVyYWxkLXRlc3QwHhcNMjYxMTI0MDEzNjQ4WhcNMzYxMTIx
    MDEzNjQ4WjAWMRQwEgYDVQQDDAtoZXJhbGQtdGVzdDBZMBMGByqGSM49AgEGCCqG
    SM49AwEHA0IABMPd4vhrSO5N9uZ3txAVVR1v63NJaOTFJoFDLigfhFvFfBv94yEn
    aKBMFGsmJQJg386VPNEMrOuCL4xxKHb8ccSjUzBRMB0GA1UdDgQWBBQeQwBQL2vh
    H69zI9FG5sVF6Eu1LzAfBgNVHSMEGDAWgBQeQwBQL2vhH69zI9FG5sVF6Eu1LzAP
    BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCICgyUvTrhE1D3mtfgOBV
    xfU8jQdC9bi/RD+gu02YQBZ4AiEA8Pv3JdQRfLCrM9PgBSRHlgeQDeRbww82hcIO
    mxrfeRQ=
    -----END CERTIFICATE-----

    """
}
