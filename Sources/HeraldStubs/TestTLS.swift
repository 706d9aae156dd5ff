import Foundation

/// TLS material made at run time for the local TLS servers (never committed): a CA and a
/// server certificate for `localhost` and `127.0.0.1`, signed by it, made with `openssl`.
public struct TestTLS: Sendable {
    public let directory: String
    public var caFile: String { directory + "/ca.pem" }
    public var certificateFile: String { directory + "/server.pem" }
    public var keyFile: String { directory + "/server-key.pem" }

    /// Makes the files under a new temporary directory.
    public static func make() async throws -> TestTLS {
        let directory = NSTemporaryDirectory() + "herald-tls-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let script = """
            set -e
            cd '\(directory)'
            umask 077
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext.cnf
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj '/CN=Herald test CA' \\
                -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \\
                -keyout ca.key -out ca.pem 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=localhost' \\
                -keyout server-key.pem -out server.csr 2>/dev/null
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext.cnf -out server.pem 2>/dev/null
            """
        _ = try await ChildProcess.run("/bin/sh", ["-c", script], timeout: .seconds(60))
        return TestTLS(directory: directory)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
