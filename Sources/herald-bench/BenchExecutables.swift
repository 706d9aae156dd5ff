import Foundation
import HeraldRuntime

/// The release executables herald-bench starts (herald-sms, herald-api), as an operator runs
/// them: beside herald-bench's own, on the bench's broker and database, no operations
/// endpoint, logs at error.
enum BenchExecutables {
    /// `name` in herald-bench's own folder (`.build/release`, or `BENCH_SCRATCH_PATH`'s).
    static func path(_ name: String) -> String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// This process's environment with the bench's servers, `namespace`, no ops port and
    /// error-level logs; the caller adds its executable's own settings.
    static func environment(_ configuration: HeraldConfiguration, namespace: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_AMQP_URL"] = configuration.amqp.url
        environment["HERALD_DATABASE_URL"] = configuration.database.url
        environment["HERALD_AMQP_NAMESPACE"] = namespace
        environment["HERALD_HTTP_ENABLED"] = "false"
        environment["HERALD_LOG_LEVEL"] = "error"
        return environment
    }

    /// ``environment(_:namespace:)`` for herald-sms: its SMS to the local webhook provider at
    /// `providerURL`, every send limit out of the way (the bench measures the path, not the
    /// limits' refusals) and the fraud guard (on in the shipped configuration) off.
    static func smsEnvironment(_ configuration: HeraldConfiguration, namespace: String, providerURL: String) -> [String: String] {
        var environment = environment(configuration, namespace: namespace)
        environment["HERALD_SMS_PROVIDERS"] = "webhook"
        environment["HERALD_SMS_WEBHOOK_URL"] = providerURL
        environment["HERALD_SMS_WEBHOOK_SECRET"] = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        for scope in ["phone", "prefix", "ip", "global"] { environment["HERALD_SMS_LIMITS_\(scope.uppercased())_MAX"] = "100000000" }
        environment["HERALD_SMS_FRAUD_GUARD_ENABLED"] = "false"
        return environment
    }
}
