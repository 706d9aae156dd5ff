import AMQP
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import Logging
import PostgresNIO

/// How big and how long: `make chaos` runs the full sizes, `make test` the short ones.
struct ChaosOptions: Sendable {
    var short = false
    var jobs = 10_000
    var poison = 10_000
    /// Valid jobs in each poison run (`--jobs` unless given: as many valid jobs as malformed
    /// messages in the full run).
    var poisonValid: Int?
    /// The single-server scenarios; the cluster ones run on request (`make chaos-cluster`).
    var scenarios = Scenario.allCases.filter { !$0.needsCluster }
    var heartbeatSeconds = 2
    var providerOutage: Duration = .seconds(60)
    var databaseOutage: Duration = .seconds(30)
    var drainTimeout: Duration = .seconds(600)
    var killInterval: Duration = .seconds(3)
    /// The most a cluster scenario may take (it fails past it).
    var clusterTimeout: Duration = .seconds(900)
    var reportDirectory = ".run/chaos"

    static func parse(_ arguments: [String]) throws -> ChaosOptions {
        var options = ChaosOptions()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--short":
                options.short = true
                options.jobs = 600
                options.poison = 400
                options.providerOutage = .seconds(8)
                options.databaseOutage = .seconds(8)
                options.drainTimeout = .seconds(240)
                options.killInterval = .seconds(2)
                options.clusterTimeout = .seconds(300)
            case "--jobs": options.jobs = try Int(rest.popFirst() ?? "").orThrow("--jobs N")
            case "--poison": options.poison = try Int(rest.popFirst() ?? "").orThrow("--poison N")
            case "--poison-valid": options.poisonValid = try Int(rest.popFirst() ?? "").orThrow("--poison-valid N")
            // How long a provider is down (provider) and the broker is stopped, then blocked (api).
            case "--outage": options.providerOutage = .seconds(try Int(rest.popFirst() ?? "").orThrow("--outage SECONDS"))
            case "--scenarios":
                options.scenarios = try (rest.popFirst() ?? "").split(separator: ",").map { try Scenario(rawValue: String($0)).orThrow("unknown scenario \($0); known: \(Scenario.allCases.map(\.rawValue))") }
            case "--report-dir": options.reportDirectory = try (rest.popFirst()).orThrow("--report-dir PATH")
            default: throw ChaosFailure("unknown argument \(argument)")
            }
        }
        return options
    }
}

enum Scenario: String, CaseIterable, Sendable {
    case kill, broker, database, provider, poison, slow, rollout, security, api, pumping
    case clusterKill = "cluster-kill", clusterPartition = "cluster-partition", clusterRolling = "cluster-rolling"
    case clusterFailover = "cluster-failover"

    /// Runs on scripts/cluster.sh's three RabbitMQ nodes and PostgreSQL pair (scripts/chaos.sh --cluster).
    var needsCluster: Bool { rawValue.hasPrefix("cluster-") }
}

extension Optional {
    func orThrow(_ message: String) throws -> Wrapped {
        guard let self else { throw ChaosFailure(message) }
        return self
    }
}

/// Everything a scenario works with: the fleet, the providers (SMS gateway, APNs, SMTP; the local
/// Apple belongs to the publisher, which makes the apple jobs), the publisher, the ledger,
/// and the local servers' script (to restart, stop and pause them).
final class Chaos: Sendable {
    let options: ChaosOptions
    let configuration: HeraldConfiguration
    let topology: HeraldTopology
    let fleet: Fleet
    let gateway: SMSGateway
    /// The fallback channel's provider (WhatsApp's Cloud API stand-in, no status webhooks).
    let whatsapp: WhatsAppStubServer
    let apns: APNsGateway
    let mail: MailGateway
    let load: Load
    let tally: Tally
    let logger: Logger
    let servicesScript: String

    init(options: ChaosOptions, configuration: HeraldConfiguration, fleet: Fleet, gateway: SMSGateway, whatsapp: WhatsAppStubServer, apns: APNsGateway,
         mail: MailGateway, load: Load, tally: Tally, logger: Logger, servicesScript: String) {
        self.options = options
        self.configuration = configuration
        topology = HeraldTopology(configuration.amqp, configuration.runner)
        self.fleet = fleet
        self.gateway = gateway
        self.whatsapp = whatsapp
        self.apns = apns
        self.mail = mail
        self.load = load
        self.tally = tally
        self.logger = logger
        self.servicesScript = servicesScript
    }

    var connection: AMQPConnection { load.client.connection }

    /// `scripts/services.sh ARGS` (restart, stop, pause the servers).
    func services(_ arguments: String...) async throws {
        _ = try await ChildProcess.run(servicesScript, arguments, timeout: .seconds(180))
    }

    /// Confirmed jobs not finished yet (of every scenario so far): how much work a fault held up.
    func unfinished() async -> Int {
        let ids = Array(load.published.keys)
        let statuses = (try? await tally.statuses(ids)) ?? [:]
        return ids.filter { statuses[$0].map(Tally.final.contains) != true }.count
    }

    /// The common end of a load scenario: wait until every job is final, then count.
    func settle(_ result: inout ScenarioResult, ids: [String], recoveryFrom: ContinuousClock.Instant? = nil) async throws {
        let (statuses, _) = try await tally.waitUntilFinal(ids, timeout: options.drainTimeout)
        if let recoveryFrom { result.recoverySeconds = (ContinuousClock.now - recoveryFrom).seconds }
        // Herald's names of the providers the fleet is configured with (main.swift).
        let accepted: [JobKind: ProviderCounts] = [
            .sms: ProviderCounts(provider: "webhook", accepted: gateway.accepted),
            .push: ProviderCounts(provider: "apns", accepted: apns.accepted),
            .email: ProviderCounts(provider: "smtp", accepted: mail.accepted),
        ]
        tally.account(&result, ids: ids, kinds: load.published, statuses: statuses, accepted: accepted, uncertain: try await tally.uncertainSends(ids))
        try await accountApple(&result, ids: ids, statuses: statuses)
        let hidden = result.duplicates.filter { !$0.counted }
        result.require(hidden.isEmpty,
                       "\(result.hiddenDuplicateSends) duplicated send(s) not counted as uncertain in their record: " + hidden.map(\.line).joined(separator: "; "))
        result.require(result.lost == 0, "\(result.lost) confirmed job(s) not finished within \(options.drainTimeout): lost")
        result.require(result.failed == 0, "\(result.failed) valid job(s) dead-lettered or recorded as failed")
        result.require(result.missingSends == 0, "\(result.missingSends) SMS, email, push or apple job(s) completed without reaching the SMS gateway, the SMTP server, APNs or Apple")
        let crashes = fleet.unexpectedExits()
        result.require(crashes.isEmpty, "workers exited on their own: \(crashes)")
    }
}
