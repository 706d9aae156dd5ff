import AMQP
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWorkers
import Logging
import PostgresNIO

// herald-chaos [--short] [--jobs N] [--poison N] [--poison-valid N] [--outage SECONDS] [--scenarios kill,broker,...] [--report-dir DIR]
// The whole fleet (the built worker executables next to this one, several per kind) on the
// local RabbitMQ and PostgreSQL, an SMS gateway, an APNs server and the local Apple on loopback
// and the local SMTP server, under faults and load. Prints a report per scenario and exits 1 when anything
// was lost or any check failed.
// scripts/chaos.sh sets the environment (the servers' addresses, database herald_chaos).

/// A progress line, written at once (print is buffered when stdout is a file: make chaos > log).
func progress(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
let options: ChaosOptions
do { options = try ChaosOptions.parse(Array(CommandLine.arguments.dropFirst())) } catch {
    FileHandle.standardError.write(Data("herald-chaos: \(error)\n".utf8))
    exit(64)
}
var logger = Logger(label: "herald-chaos")
logger.logLevel = .info
let environment = ProcessInfo.processInfo.environment
let binDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
let servicesScript = environment["HERALD_SERVICES_SCRIPT"] ?? "scripts/services.sh"

// The fleet's configuration: the shipped one with the servers' addresses from the environment,
// a namespace of its own, short heartbeats, retry tiers that outlast the provider outage, an
// SMS gateway that takes everything, and ten-digit codes (searchable in a dump).
var configuration = HeraldConfiguration.loadAllOrExit(path: nil, tool: "herald-chaos", requireKeyRing: true)
let namespace = "chaos\(UUID().uuidString.prefix(6).lowercased())"
configuration.amqp.namespace = namespace
configuration.amqp.heartbeatSeconds = options.heartbeatSeconds
configuration.runner.retryDelaysMilliseconds = [1000, 2000, 5000, 10000]
configuration.runner.maxAttempts = 12
let codeLength = 10
let gateway = try await SMSGateway(codeLength: codeLength)
let whatsapp = try await WhatsAppStubServer()
whatsapp.script([])
let runDirectory = options.reportDirectory + "/" + namespace
let apns = try await APNsGateway(directory: runDirectory + "/keys")
let database = try Database.makeClient(configuration.database, logger: logger)
let databaseTask = Task { await database.run() }
let apple = try await AppleGateway(directory: runDirectory + "/keys", database: database, logger: logger)
let client = try HeraldClient(configuration: configuration.amqp, logger: logger)
let load = Load(client: client, apple: apple)
let mail = try MailGateway(environment: environment, idPrefix: load.idPrefix)
var workerEnvironment = environment.merging(apns.environment) { _, ours in ours }.merging(mail.environment) { _, ours in ours }
    .merging(apple.environment) { _, ours in ours }
for (key, value) in [
    "HERALD_AMQP_NAMESPACE": namespace,
    "HERALD_AMQP_HEARTBEAT_SECONDS": String(options.heartbeatSeconds),
    "HERALD_RUNNER_RETRY_DELAYS_MS": configuration.runner.retryDelaysMilliseconds.map(String.init).joined(separator: ","),
    "HERALD_RUNNER_MAX_ATTEMPTS": String(configuration.runner.maxAttempts),
    "HERALD_LOG_LEVEL": "info",
    "HERALD_SMS_PROVIDERS": "webhook",
    "HERALD_SMS_WEBHOOK_URL": gateway.url,
    "HERALD_SMS_WEBHOOK_SECRET": "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(),
    "HERALD_SMS_CODE_LENGTH": String(codeLength),
    // The kill scenario's fallbacks: [sms, whatsapp], WhatsApp a second after the SMS (no receipts come).
    "HERALD_SMS_WHATSAPP_BASE_URL": whatsapp.baseURL, "HERALD_SMS_WHATSAPP_PHONE_NUMBER_ID": whatsapp.phoneNumberID,
    "HERALD_SMS_WHATSAPP_ACCESS_TOKEN": whatsapp.accessToken, "HERALD_SMS_WHATSAPP_TEMPLATE": whatsapp.template,
    "HERALD_SMS_FALLBACK_AFTER_SECONDS_SMS": "1",
    // The load verifies only some codes: the fraud guard (on by default) would pause its regions.
    "HERALD_SMS_FRAUD_GUARD_ENABLED": "false",
    "HERALD_SMS_LIMITS_PHONE_MAX": "100000000", "HERALD_SMS_LIMITS_PREFIX_MAX": "100000000", "HERALD_SMS_LIMITS_GLOBAL_MAX": "100000000",
    // herald-email refuses continue URLs outside its authorized domains (default: localhost);
    // the load's email jobs continue to app.example.com.
    "HERALD_EMAIL_AUTHORIZED_DOMAINS": "app.example.com",
    // Every load address is at example.com (MailGateway): the per-domain limit would cut the load.
    "HERALD_EMAIL_LIMITS_DOMAIN_MAX": "100000000",
] { workerEnvironment[key] = value }
configuration.sms.codeLength = codeLength

try await client.connection.waitUntilConnected(timeout: .seconds(10))
let topology = HeraldTopology(configuration.amqp, configuration.runner)
try await client.connection.declare(topology.all)

let fleet = try Fleet(counts: [(.sms, 2), (.email, 2), (.push, 1), (.cleanup, 1), (.apple, 1)], binDir: binDir, logDir: runDirectory + "/logs",
                      environment: workerEnvironment, basePort: Int(environment["HERALD_CHAOS_BASE_PORT"] ?? "") ?? 19_200)
// Stopped from outside (SIGTERM, SIGINT): the workers go with the harness, or they would
// outlive it and hold their ports for the next run.
signal(SIGTERM, SIG_IGN)
signal(SIGINT, SIG_IGN)
let stopSignals = [SIGTERM, SIGINT].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
    source.setEventHandler {
        for pid in fleet.pids { kill(pid, SIGKILL) }
        exit(128 + number)
    }
    source.resume()
    return source
}
let chaos = Chaos(options: options, configuration: configuration, fleet: fleet, gateway: gateway, whatsapp: whatsapp, apns: apns, mail: mail, load: load,
                  tally: Tally(database: database, logger: logger), logger: logger, servicesScript: servicesScript)
var results: [ScenarioResult] = []
do {
    try await fleet.waitUntilReady(timeout: .seconds(60))
    for scenario in options.scenarios {
        progress("[chaos] \(scenario.rawValue) …")
        let result: ScenarioResult
        do {
            switch scenario {
            case .kill: result = try await chaos.killScenario()
            case .broker: result = try await chaos.brokerScenario()
            case .database: result = try await chaos.databaseScenario()
            case .provider: result = try await chaos.providerScenario()
            case .poison: result = try await chaos.poisonScenario()
            case .slow: result = try await chaos.slowScenario()
            case .rollout: result = try await chaos.rolloutScenario()
            case .security: result = try await chaos.securityScenario()
            case .api: result = try await chaos.apiScenario()
            case .pumping: result = try await chaos.pumpingScenario()
            // Bounded: a fleet (or a harness) cut off from the broker or the database for good would wait for ever.
            case .clusterKill: result = try await withDeadline(options.clusterTimeout) { try await chaos.clusterKillScenario() }
            case .clusterPartition: result = try await withDeadline(options.clusterTimeout) { try await chaos.clusterPartitionScenario() }
            case .clusterRolling: result = try await withDeadline(options.clusterTimeout) { try await chaos.clusterRollingScenario() }
            case .clusterFailover: result = try await withDeadline(options.clusterTimeout) { try await chaos.clusterFailoverScenario() }
            }
        } catch {
            var failed = ScenarioResult(name: scenario.rawValue)
            failed.failures.append("the harness failed: \(error)")
            result = failed
        }
        progress("[chaos] \(scenario.rawValue): \(result.passed ? "pass" : "FAIL \(result.failures)")")
        results.append(result)
    }
} catch {
    var failed = ScenarioResult(name: "start-up")
    failed.failures.append("\(error)")
    results.append(failed)
}
await fleet.stop()
await gateway.close()
await whatsapp.close()
await apns.close()
await apple.close()
mail.close()
// The SMS workers' wait queue too (declared by them: sms.fallback.after_seconds.sms, 1 s).
for queue in topology.all.queues + [.init(name: topology.waitQueue(.sms, seconds: 1))] { try? await client.connection.deleteQueue(queue.name) }
for exchange in topology.all.exchanges { try? await client.connection.deleteExchange(exchange.name) }
await client.close()
databaseTask.cancel()

let report = Report(results: results, options: options, workers: fleet.names)
try report.write(to: runDirectory)
print("\n" + report.markdown)
print("\nreport: \(runDirectory)/report.md, \(runDirectory)/report.json; worker logs: \(runDirectory)/logs")
exit(report.passed ? 0 : 1)
