import Foundation

/// The command line every worker executable takes: `[--config PATH]`.
public enum WorkerArguments {
    /// The `--config` path, nil when absent; exits 64 on anything else.
    public static func configPath(_ arguments: [String] = CommandLine.arguments) -> String? {
        let name = URL(fileURLWithPath: arguments.first ?? "herald").lastPathComponent
        var rest = arguments.dropFirst()
        var path: String?
        while let argument = rest.popFirst() {
            switch argument {
            case "--config":
                guard let value = rest.popFirst(), !value.hasPrefix("--") else { usage(name, "--config needs a path") }
                path = value
            case "-h", "--help":
                print("usage: \(name) [--config PATH]\n\nConsumes its queue until SIGTERM/SIGINT. Configuration: --config, else $HERALD_CONFIG, else Config/herald.yaml; HERALD_* variables override keys.")
                exit(0)
            default:
                usage(name, "unknown argument '\(argument)'")
            }
        }
        return path
    }

    private static func usage(_ name: String, _ message: String) -> Never {
        FileHandle.standardError.write(Data("\(name): \(message)\nusage: \(name) [--config PATH]\n".utf8))
        exit(ExitCode.usage.rawValue)
    }
}
