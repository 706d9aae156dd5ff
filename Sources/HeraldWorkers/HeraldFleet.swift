import Foundation
import HeraldAPIStore
import HeraldApple
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

/// Every worker kind Herald ships, for the programs that work across all of them (`heraldctl`,
/// the tests and harnesses): their configuration sections, schema groups and job types.
public enum HeraldFleet {
    public static var workers: [any HeraldWorker.Type] { [PhoneWorker.self, EmailWorker.self, PushWorker.self, CleanupWorker.self, AppleWorker.self] }

    /// Every configuration section (the workers' and herald-api's): `config check` and tools read them all.
    public static var sections: [any ConfigurationSection.Type] { workers.map { $0.section } + [APIConfiguration.self] }

    /// The runtime's schema group, every worker's, then herald-api's, in the order they are applied.
    public static var schema: [SchemaGroup] { [RuntimeSchema.group] + workers.map { $0.schema } + [APISchema.group] }

    /// The job types of a worker kind's queue.
    public static func jobTypes(_ kind: JobKind) -> [any HeraldJob.Type] {
        workers.first { $0.kind == kind }?.jobTypes ?? []
    }
}

extension HeraldConfiguration {
    /// Loads every section (the platform's and every worker's).
    public static func loadAll(path: String?) throws -> (HeraldConfiguration, ConfigSource) {
        try load(path: path, sections: HeraldFleet.sections)
    }

    /// ``loadAll(path:)`` for a tool's top level (herald-bench, herald-chaos, herald-dev-apple): an
    /// invalid configuration is one line on stderr naming the key, and exit 78 (``ExitCode/configuration``),
    /// as the workers do, never a Swift fatal error with a backtrace. `requireKeyRing`: the tool
    /// hashes (codes, API keys): `secrets.hmac_keys` is checked now, not at its first hash.
    public static func loadAllOrExit(path: String?, tool: String, requireKeyRing: Bool) -> HeraldConfiguration {
        do {
            let configuration = try loadAll(path: path).0
            if requireKeyRing { _ = try configuration.secrets.keyRing() }
            return configuration
        } catch {
            FileHandle.standardError.write(Data("\(tool): \(error)\n".utf8))
            exit(ExitCode.configuration.rawValue)
        }
    }
}
