import ArgumentParser
import Foundation
import HeraldClient
import HeraldRuntime
import HeraldWorkers

/// `heraldctl migrate [--dry-run]` and `heraldctl migrate status`: the schema groups' SQL files
/// against `public.herald_schema_ledger` (docs/operations.md, "Schema migrations").
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply the database migrations (safe to run concurrently).",
        subcommands: [Apply.self, Status.self], defaultSubcommand: Apply.self)

    struct Apply: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending migrations and changed functions; refuse, applying nothing, when an applied migration changed.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Print what would run, change nothing.") var dryRun = false

        func run() async throws {
            let context = try CLIContext.load(options)
            let plan: MigrationPlan
            do {
                plan = try await context.withDatabase { client in
                    try await Migrator(client: client, groups: HeraldFleet.schema, logger: context.logger).migrate(dryRun: dryRun)
                }
            } catch let error as MigrationError {
                throw CLIExit.fail(error.description)
            }
            let work = plan.work
            if options.output == .json {
                printJSON(["dry_run": dryRun, "legacy_versions": plan.legacyVersions, "work": work.map(\.json)])
                return
            }
            if !plan.legacyVersions.isEmpty {
                let adopted = work.filter { $0.state == .adoptable }.count
                print("\(dryRun ? "would adopt" : "adopted") the old ledger (versions \(plan.legacyVersions.map(String.init).joined(separator: ", "))) as \(adopted) migrations")
            }
            let run = work.filter { $0.state != .adoptable }
            if run.isEmpty {
                print("schema up to date")
            } else {
                for item in run { print("\(dryRun ? "would apply" : "applied") \(item.group)/\(item.path)\(item.state == .changed && item.recordedChecksum != nil ? " (changed)" : "")") }
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Each schema group's migrations and functions: applied, adopted, pending, changed, drifted or missing.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "List every file, not only those that are not applied.") var all = false

        func run() async throws {
            let context = try CLIContext.load(options)
            let plan = try await context.withDatabase { client in
                try await Migrator(client: client, groups: HeraldFleet.schema, logger: context.logger).plan()
            }
            if options.output == .json {
                printJSON(["legacy_versions": plan.legacyVersions, "items": plan.items.map(\.json)])
                do { try plan.check() } catch { throw CLIExit.fail(error.description) }
                return
            }
            for group in HeraldFleet.schema.map(\.name) {
                let items = plan.items.filter { $0.group == group }
                var counts: [MigrationPlan.Item.State: Int] = [:]
                for item in items where item.kind == .migration { counts[item.state, default: 0] += 1 }
                let functions = items.filter { $0.kind == .definition }
                let summary = counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
                print("\(group): migrations \(summary.isEmpty ? "none" : summary); functions \(functions.filter { $0.state == .applied }.count) of \(functions.count) applied")
                for item in items where all || ![.applied, .adopted].contains(item.state) {
                    var line = "  \(item.state.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)) \(item.path)"
                    if item.state == .drifted { line += " (recorded \(item.recordedChecksum ?? "?"), file \(item.checksum))" }
                    print(line)
                }
            }
            if !plan.legacyVersions.isEmpty {
                print("old ledger: versions \(plan.legacyVersions.map(String.init).joined(separator: ", ")) (the next migrate adopts them)")
            }
            do { try plan.check() } catch { throw CLIExit.fail(error.description) }
        }
    }
}

extension MigrationPlan.Item {
    var json: [String: Any] {
        var out: [String: Any] = ["group": group, "kind": kind.rawValue, "path": path, "state": state.rawValue, "checksum": checksum]
        if let version { out["version"] = version }
        if let recordedChecksum { out["recorded_checksum"] = recordedChecksum }
        if let appliedAt { out["applied_at"] = ISO8601DateFormatter().string(from: appliedAt) }
        return out
    }
}
