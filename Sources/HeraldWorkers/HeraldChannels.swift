import Foundation
import HeraldAPIStore
import HeraldApple
import HeraldCleanup
import HeraldEmail
import HeraldPush
import HeraldRuntime
import HeraldSMS

/// Every channel Herald ships, for the programs that work across all of them (`heraldctl`,
/// a front API that migrates the schema, the tests and harnesses): their configuration
/// sections, schema groups and job types.
public enum HeraldChannels {
    public static var all: [any HeraldChannel.Type] { [SMSChannel.self, EmailChannel.self, PushChannel.self, CleanupChannel.self, AppleChannel.self] }

    /// Every configuration section (the channels' and herald-api's): `config check` and tools read them all.
    public static var sections: [any ConfigurationSection.Type] { all.map { $0.section } + [APIConfiguration.self] }

    /// The runtime's schema group, every channel's, then herald-api's, in the order they are applied.
    public static var schema: [SchemaGroup] { [RuntimeSchema.group] + all.map { $0.schema } + [APISchema.group] }

    /// The job types of a worker kind's queue.
    public static func jobTypes(_ kind: JobKind) -> [any HeraldJob.Type] {
        all.first { $0.kind == kind }?.jobTypes ?? []
    }
}

extension HeraldConfiguration {
    /// Loads every section (the platform's and every channel's).
    public static func loadAll(path: String?) throws -> (HeraldConfiguration, ConfigSource) {
        try load(path: path, sections: HeraldChannels.sections)
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
