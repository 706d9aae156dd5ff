import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWire

/// `heraldctl cleanup …`: the expired anonymous account cleanup (docs/operations.md, "Cleanup").
struct Cleanup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Expired anonymous account cleanup: schedule, status, enable, disable, preview, dry-run, follow, cancel.",
        subcommands: [Schedule.self, Status.self, Enable.self, Disable.self, Preview.self, DryRun.self, Follow.self, Cancel.self]
    )

    struct Schedule: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a cleanup run (for cron, a systemd timer, a Kubernetes CronJob); no duplicate while one is active.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Run id (default: a new one).") var runID: String?
        @Option(help: "Jobs published for the run, i.e. workers sharing it (default: cleanup.fan_out).") var fanOut: Int?
        @Flag(help: "A dry run: record what would be deleted, delete nothing.") var dryRun = false

        func run() async throws {
            let context = try CLIContext.load(options)
            let runID = self.runID ?? CleanupScheduler.newRunID()
            do { try CleanupRunJob(runID: runID).validate() } catch { throw CLIExit.fail("invalid --run-id: \(error.reason)", code: .usage) }
            let (fanOut, dryRun, namespace) = (self.fanOut, self.dryRun, context.configuration.amqp.namespace)
            let result = try await context.withDatabase { database in
                try await context.withBroker { connection in
                    let client = HeraldClient(connection: connection, namespace: namespace)
                    return try await CleanupScheduler(client: database, configuration: context.configuration.cleanup, logger: context.logger)
                        .schedule(runID: runID, dryRun: dryRun, fanOut: fanOut) { job, messageID in
                            try await client.enqueue(job, messageID: messageID)
                        }
                }
            }
            if options.output == .json {
                printJSON(["result": result.name, "run": result.run.json])
            } else {
                switch result {
                case .scheduled(let run): print("scheduled cleanup run \(run.id) (\(run.fanOut) job\(run.fanOut == 1 ? "" : "s"))")
                case .resumed(let run): print("resumed stale cleanup run \(run.id)")
                case .alreadyActive(let run): print("cleanup run \(run.id) is active (\(run.status.rawValue)); nothing scheduled")
                }
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The policy and the latest runs with their counts.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "How many runs.") var limit = 10

        func run() async throws {
            let context = try CLIContext.load(options)
            let limit = self.limit
            let (policy, kept, runs) = try await context.withDatabase { client in
                let store = CleanupPolicyStore(client: client, logger: context.logger)
                return (try await store.load(), try await store.keptDates(),
                        try await CleanupRunStore(client: client, logger: context.logger).recent(limit: limit))
            }
            if options.output == .json {
                var policyJSON = policy.json
                policyJSON["kept_dates"] = kept
                printJSON(["policy": policyJSON, "runs": runs.map(\.json)])
                return
            }
            print(policy.line + (kept > 0 ? "; \(kept) anonymous accounts keep a deletion date given before it was switched off" : ""))
            print("RUN".padding(toLength: 40, withPad: " ", startingAt: 0) + "STATUS     DRY  DELETED   ELIGIBLE  PURGED  STARTED               ENDED")
            for run in runs { print(run.line) }
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Switch cleanup on (accounts that exist now without a date are due a retention after now); or change the retention.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Delete anonymous accounts older than this many days (default: the current retention, 30 at first).")
        var retentionDays: Int?

        func run() async throws {
            let context = try CLIContext.load(options)
            if let days = retentionDays, !(1...3_650).contains(days) { throw CLIExit.fail("--retention-days must be 1 to 3650", code: .usage) }
            let (days, batchSize) = (retentionDays, context.configuration.cleanup.batchSize)
            let policy = try await context.withDatabase {
                try await CleanupPolicyStore(client: $0, logger: context.logger).enable(retentionDays: days, batchSize: batchSize)
            }
            if options.output == .json { printJSON(policy.json) } else { print(policy.line) }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Switch cleanup off: no new deletion dates; dates already given are kept and runs still delete those accounts when due.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Also set the retention kept for the next enable.") var retentionDays: Int?

        func run() async throws {
            let context = try CLIContext.load(options)
            if let days = retentionDays, !(1...3_650).contains(days) { throw CLIExit.fail("--retention-days must be 1 to 3650", code: .usage) }
            let days = retentionDays
            let policy = try await context.withDatabase { client in
                let store = CleanupPolicyStore(client: client, logger: context.logger)
                // Disable first: it freezes the schedule with the retention the dates were given by.
                let disabled = try await store.disable()
                guard let days else { return disabled }
                return try await store.setRetention(days: days)
            }
            if options.output == .json { printJSON(policy.json) } else { print(policy.line) }
        }
    }

    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "How many anonymous accounts would become due, and on which day, if cleanup were enabled now with a retention (on or off).")
        @OptionGroup var options: GlobalOptions
        @Option(help: "The retention to preview, e.g. 30d, 12h (default: the policy's).") var retention: AgeArgument?

        func run() async throws {
            let context = try CLIContext.load(options)
            var seconds: Int?
            if let retention {
                guard CleanupPreview.retentionRange.contains(Int(retention.seconds)) else {
                    throw CLIExit.fail("--retention must be 1s to 3650d", code: .usage)
                }
                seconds = Int(retention.seconds)
            }
            let retentionSeconds = seconds
            let preview = try await context.withDatabase {
                try await CleanupPreview.make(client: $0, retentionSeconds: retentionSeconds, logger: context.logger)
            }
            if options.output == .json { printJSON(preview.json); return }
            let iso = ISO8601DateFormatter()
            let state = preview.policy.enabled ? "cleanup enabled" : "cleanup disabled; if enabled now"
            print("\(state), retention \(formatAge(Double(preview.retentionSeconds))): accounts created before \(iso.string(from: preview.countsFrom)) count from then")
            print("due now (the next run deletes them): \(preview.dueNow)")
            if !preview.days.isEmpty { print("DAY (UTC)   ACCOUNTS  KEPT") }
            for day in preview.days {
                print(day.day.padding(toLength: 12, withPad: " ", startingAt: 0)
                      + String(day.accounts).padding(toLength: 10, withPad: " ", startingAt: 0) + String(day.kept))
            }
            print("total: \(preview.total) anonymous accounts (\(preview.kept) with a date kept from before cleanup was switched off)")
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop the active run after its current batch (deletion dates stay; the next schedule starts again).")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            let context = try CLIContext.load(options)
            let run = try await context.withDatabase {
                try await CleanupRunStore(client: $0, logger: context.logger).cancelActive(reason: "cancelled by heraldctl cleanup cancel")
            }
            guard let run else { throw CLIExit.fail(CleanupError.noActiveRun.description) }
            if options.output == .json { printJSON(run.json) } else { print("cancelled cleanup run \(run.id)") }
        }
    }

    struct DryRun: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What a run would delete and purge now, computed here; nothing is deleted or published.")
        @OptionGroup var options: GlobalOptions
        @Option(help: "Eligible ids to show.") var sample = 5

        func run() async throws {
            let context = try CLIContext.load(options)
            let sample = self.sample
            let report = try await context.withDatabase {
                try await CleanupReport.make(client: $0, configuration: context.configuration.cleanup, sampleSize: sample, logger: context.logger)
            }
            if options.output == .json { printJSON(report.json); return }
            print(report.policy.line)
            print("eligible anonymous accounts: \(report.eligible) (a run deletes at most \(report.perRunCap))")
            if let oldest = report.oldestEligibleCreatedAt { print("oldest eligible created at: \(ISO8601DateFormatter().string(from: oldest))") }
            if !report.sample.isEmpty { print("e.g. \(report.sample.joined(separator: ", "))") }
            for (target, count) in report.purgeable.sorted(by: { $0.key < $1.key }) { print("purgeable \(target): \(count)") }
        }
    }

    struct Follow: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a run's progress until it ends.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The run id (heraldctl cleanup status lists them).") var runID: String
        @Option(help: "Seconds between looks.") var interval = 1.0
        @Option(help: "Give up after this many seconds (0: never).") var timeout = 0.0

        func run() async throws {
            let context = try CLIContext.load(options)
            let (runID, interval, timeout, json) = (self.runID, self.interval, self.timeout, options.output == .json)
            let final: CleanupRun? = try await context.withDatabase { client in
                let store = CleanupRunStore(client: client, logger: context.logger)
                let started = Date()
                var lastCount = -1
                var lastTime = Date()
                while true {
                    guard let run = try await store.get(runID) else { return nil }
                    let now = Date()
                    let rate = lastCount >= 0 ? Double(run.accountsDeleted - lastCount) / max(now.timeIntervalSince(lastTime), 0.001) : 0
                    (lastCount, lastTime) = (run.accountsDeleted, now)
                    if json {
                        var line = run.json
                        line["rate_per_second"] = Int(rate)
                        printJSONLine(line)
                    } else {
                        print(run.progressLine(rate: rate))
                    }
                    if !run.status.isActive { return run }
                    if timeout > 0, now.timeIntervalSince(started) > timeout { return run }
                    try await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                }
            }
            guard let final else { throw CLIExit.fail("no cleanup run '\(runID)'", code: .usage) }
            if final.status == .failed { throw ExitCode(HeraldRuntime.ExitCode.failure.rawValue) }
        }
    }
}

func printJSONLine(_ value: Any) {
    if let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) {
        print(String(decoding: data, as: UTF8.self))
    }
}

extension CleanupPolicy {
    var json: [String: Any] {
        var out: [String: Any] = ["enabled": enabled, "retention_days": retentionDays, "updated_at": ISO8601DateFormatter().string(from: updatedAt)]
        if let enabledAt { out["enabled_at"] = ISO8601DateFormatter().string(from: enabledAt) }
        if let keptUntil { out["kept_until"] = ISO8601DateFormatter().string(from: keptUntil) }
        return out
    }

    var line: String {
        let retention = String(format: "%g", retentionDays)
        guard enabled, let enabledAt else {
            let kept = keptUntil.map { "; accounts created before \(ISO8601DateFormatter().string(from: $0)) keep their deletion dates" } ?? ""
            return "cleanup disabled (retention \(retention) days for the next enable)" + kept
        }
        return "cleanup enabled since \(ISO8601DateFormatter().string(from: enabledAt)), retention \(retention) days"
    }
}

extension CleanupRun {
    var line: String {
        let iso = ISO8601DateFormatter()
        func col(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0) }
        return col(id, 40) + col(status.rawValue, 11) + col(dryRun ? "yes" : "no", 5) + col(String(accountsDeleted), 10)
            + col(eligibleAtStart.map(String.init) ?? "-", 10) + col(String(purged.values.reduce(0, +)), 8)
            + col(startedAt.map { iso.string(from: $0) } ?? "-", 22) + (endedAt.map { iso.string(from: $0) } ?? "-")
    }

    func progressLine(rate: Double) -> String {
        let target = min(eligibleAtStart ?? 0, maxAccounts)
        let percent = target > 0 ? min(100, Double(accountsDeleted) * 100 / Double(target)) : (status.isActive ? 0 : 100)
        let purgedText = purged.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(id) \(status.rawValue): \(accountsDeleted)/\(target) accounts (\(String(format: "%.0f", percent))%), "
            + "\(Int(rate))/s, \(batches) batches, \(joins) joins" + (purgedText.isEmpty ? "" : "; purged \(purgedText)")
            + (reason.map { " — \($0)" } ?? "")
    }
}
