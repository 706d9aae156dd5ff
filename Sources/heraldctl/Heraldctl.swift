import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime

/// `heraldctl`: the operator's command line.
@main
struct Heraldctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heraldctl",
        abstract: "Operate Herald: schema, topology, jobs, dead letters, stats, verifications, cleanup, API keys.",
        subcommands: [Migrate.self, Topology.self, Enqueue.self, DeadLetters.self, Stats.self, ConfigCommand.self, Outbox.self, Demo.self, Verify.self, Cleanup.self, Fraud.self, APIKeys.self]
    )
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: $HERALD_CONFIG, then Config/herald.yaml).")
    var config: String?

    @Option(name: .long, help: "text or json.")
    var output: OutputFormat = .text
}

enum OutputFormat: String, ExpressibleByArgument, Sendable { case text, json }

/// Exit codes of heraldctl (docs/operations.md).
enum CLIExit {
    static func fail(_ message: String, code: HeraldRuntime.ExitCode = .failure) -> ArgumentParser.ExitCode {
        FileHandle.standardError.write(Data("heraldctl: \(message)\n".utf8))
        return ArgumentParser.ExitCode(code.rawValue)
    }
}

func printJSON(_ value: Any) {
    if let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) {
        print(String(decoding: data, as: UTF8.self))
    }
}
