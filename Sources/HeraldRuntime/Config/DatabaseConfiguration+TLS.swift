import NIOSSL

extension DatabaseConfiguration {
    /// `disable` and `prefer` only for a loopback `host`; `database.tls_ca_file`, when set,
    /// readable PEM certificates.
    func checkTLS(host: String) throws {
        if tls != .require, !ClearTextPolicy.isLoopback(host) {
            throw ConfigError(key: "database.tls", reason: "'\(tls.rawValue)' is allowed only for a database on loopback "
                + "(localhost, 127.0.0.0/8, ::1), not \(host): a connection in clear text, or one a man in the middle "
                + "can downgrade to it, would expose phone numbers, email addresses and verification results; "
                + "use require (with database.tls_ca_file for a private CA)")
        }
        // Checked in every mode (with disable it is unused), so a wrong path never waits
        // for the day TLS is turned on.
        if !tlsCAFile.isEmpty { _ = try trustedCertificates() }
    }

    /// The TLS client configuration of `prefer` and `require`: certificate chain and host name
    /// verified (for an IP address, against the certificate's IP addresses), trusting
    /// `database.tls_ca_file` only when it is set, else the system's trust store.
    public func tlsConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        if !tlsCAFile.isEmpty {
            configuration.trustRoots = .certificates(try trustedCertificates())
        }
        return configuration
    }

    private func trustedCertificates() throws -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(tlsCAFile)
        } catch {
            throw ConfigError(key: "database.tls_ca_file", reason: "cannot read PEM certificates from \(tlsCAFile) (\(error))")
        }
        guard !certificates.isEmpty else {
            throw ConfigError(key: "database.tls_ca_file", reason: "\(tlsCAFile) holds no PEM certificate")
        }
        return certificates
    }
}
