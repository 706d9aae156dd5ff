import Foundation
import HeraldAPIStore
import HeraldRuntime
import Logging
import NIOSSL
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `api.tls.certificate_file` and `api.tls.key_file`, read as PEM.
struct TLSFiles: Sendable {
    let certificate: String
    let key: String

    init(_ api: APIConfiguration) {
        certificate = api.tlsCertificateFile
        key = api.tlsKeyFile
    }

    struct Loaded: Sendable {
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        let stamp: String
    }

    /// The chain and key; a file that is missing or not PEM is a configuration error naming its key.
    func load() throws -> Loaded {
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMFile(certificate) } catch {
            throw ConfigError(key: "api.tls.certificate_file", reason: "cannot read a PEM certificate chain from \(certificate)")
        }
        guard !chain.isEmpty else { throw ConfigError(key: "api.tls.certificate_file", reason: "\(certificate) holds no certificate") }
        let privateKey: NIOSSLPrivateKey
        do { privateKey = try NIOSSLPrivateKey(file: key, format: .pem) } catch {
            throw ConfigError(key: "api.tls.key_file", reason: "cannot read a PEM private key from \(key)")
        }
        return Loaded(chain: chain, key: privateKey, stamp: stamp())
    }

    /// What changes when either file is replaced: the file a path leads to through its symbolic
    /// links (a Kubernetes Secret volume swaps a link: the files themselves stay untouched), its
    /// size and modification time.
    func stamp() -> String {
        [certificate, key].map { path in
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let attributes = try? FileManager.default.attributesOfItem(atPath: target)
            return "\(target):\(attributes?[.size] ?? 0)@\((attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)"
        }.joined(separator: ",")
    }
}

/// Serves the certificate and key of the moment: each TLS handshake takes the current pair
/// (NIOSSL's context callback), and the pair is read again on SIGHUP or when the files change
/// (checked every 10 s). A pair that does not load keeps the one in use, with an error logged.
final class CertificateReloader: Service, Sendable {
    private let files: TLSFiles
    private let current: Mutex<TLSFiles.Loaded>
    private let logger: Logger

    init(files: TLSFiles, current: TLSFiles.Loaded, logger: Logger) {
        self.files = files
        self.current = Mutex(current)
        self.logger = logger
    }

    func serverConfiguration() -> TLSConfiguration {
        let loaded = current.withLock { $0 }
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: loaded.chain.map { .certificate($0) }, privateKey: .privateKey(loaded.key))
        tls.minimumTLSVersion = .tlsv12
        tls.sslContextCallback = { [self] _, promise in
            let pair = self.current.withLock { $0 }
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = pair.chain.map { .certificate($0) }
            override.privateKey = .privateKey(pair.key)
            promise.succeed(override)
        }
        return tls
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals { self.reload(because: "SIGHUP") }
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(10))
                    if self.files.stamp() != self.current.withLock({ $0.stamp }) { self.reload(because: "the files changed") }
                }
            }
            try await gracefulShutdown()
            group.cancelAll()
        }
    }

    func reload(because reason: String) {
        do {
            let loaded = try files.load()
            current.withLock { $0 = loaded }
            logger.info("TLS certificate reloaded", metadata: ["reason": "\(reason)"])
        } catch {
            logger.error("TLS certificate not reloaded; the one in use stays", metadata: ["reason": "\(reason)", "error": "\(error)"])
        }
    }
}

/// SIGHUP with no certificate to reload (`api.tls.*` unset): logged, not the default action,
/// which would end the process (systemd's `ExecReload` and a terminal's hangup send it).
struct HangupWithoutTLS: Service {
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals { logger.notice("SIGHUP: nothing to reload (api.tls.certificate_file is not set)") }
            }
            try await gracefulShutdown()
            group.cancelAll()
        }
    }
}
