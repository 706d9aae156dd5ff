import Foundation
import HeraldClient
import HeraldRuntime
import HeraldStubs

/// Past one machine (issue 33): the fleet and the publisher on a three-node RabbitMQ cluster
/// (`scripts/cluster.sh`, `make chaos-cluster`), `amqp.url` the list of its nodes, under mixed
/// jobs. Each scenario: nothing lost, every repeated send known to Herald as uncertain, and the
/// time from the fault until every worker consumes again (its `/readyz`: connected, topology
/// declared, consuming).
extension Chaos {
    /// The node leading the SMS work queue killed with SIGKILL, started again 10 s later.
    func clusterKillScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "RabbitMQ cluster: kill -9 of the node leading \(topology.workQueue(.sms))")
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(20), over: "the killed node was back") { result in
            let node = try await leader(of: topology.workQueue(.sms))
            let outages = try await outages {
                try await cluster("rabbit-kill", String(node))
                try await Task.sleep(for: .seconds(5))
            }
            result.notes.append("killed node \(node) (the leader): " + Self.describe(outages, of: fleet.names.count))
            let after = try await leader(of: topology.workQueue(.sms))
            result.require(after != node, "the queue's leader is still the killed node \(node)")
            result.notes.append("new leader: node \(after)")
            try await Task.sleep(for: .seconds(5))
            try await cluster("rabbit-start-node", String(node))
            try await fleet.waitUntilReady(timeout: .seconds(60))
        }
        return result
    }

    /// One node (the SMS queue's leader: the worst case) cut off from the other two for 30 s
    /// by iptables, then healed. Under `pause_minority` it pauses, closing its clients'
    /// connections; they reconnect to the majority.
    func clusterPartitionScenario() async throws -> ScenarioResult {
        let seconds = options.short ? 20 : 30
        var result = ScenarioResult(name: "RabbitMQ cluster: the SMS queue's leader partitioned away for \(seconds) s")
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(Double(seconds + 10)), over: "the partition healed") { result in
            let node = try await leader(of: topology.workQueue(.sms))
            // Blocks for `seconds`, then heals (on every exit path of the script).
            let outages = try await outages {
                try await cluster("partition", String(node), String(seconds), timeout: .seconds(Double(seconds + 60)))
            }
            result.notes.append("node \(node) (the leader) partitioned: " + Self.describe(outages, of: fleet.names.count))
            try await clusterWhole(partitioned: node, &result)
        }
        return result
    }

    /// Every node restarted in turn (each only once the quorum queues keep a majority without it).
    func clusterRollingScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "RabbitMQ cluster: rolling restart of the three nodes")
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(30), over: "the last node was back") { result in
            let started = ContinuousClock.now
            let outages = try await outages { try await cluster("rabbit-rolling-restart", timeout: .seconds(600)) }
            result.notes.append(String(format: "rolling restart took %.1f s: ", (ContinuousClock.now - started).seconds) + Self.describe(outages, of: fleet.names.count))
        }
        return result
    }

    /// The PostgreSQL primary killed with SIGKILL under load and its synchronous standby promoted
    /// 2 s later (what CloudNativePG or an operator does, slower); `database.url` names both
    /// hosts, and each process's relay moves to the new primary. Before it, codes are verified;
    /// after it, none of them may verify again (a verification the standby had not received
    /// would). Then the old primary is rebuilt as the new one's standby.
    func clusterFailoverScenario() async throws -> ScenarioResult {
        var result = ScenarioResult(name: "PostgreSQL: the primary killed (-9), its synchronous standby promoted")
        let verification = try HeraldVerification(database: tally.database, secrets: configuration.secrets)
        let early = await load.publish(10, kind: { _ in .sms })
        _ = try await tally.waitUntilFinal(early, timeout: .seconds(60))
        var verified: [(id: String, code: String)] = []
        for id in early {
            let code = try gateway.codes[id].orThrow("no code received for \(id)")
            if case .verified = try await verification.verifyPhone(verificationID: id, code: code, logger: logger) { verified.append((id, code)) }
        }
        result.require(verified.count == early.count, "only \(verified.count) of \(early.count) codes verified before the failover")
        try await underLoad(&result, count: options.jobs / 2, span: .seconds(20), over: "the standby was promoted") { result in
            let killed = ContinuousClock.now
            try await cluster("pg-kill-primary")
            try await Task.sleep(for: .seconds(2))
            try await cluster("pg-promote")
            let promoted = ContinuousClock.now
            try await fleet.waitUntilReady(timeout: .seconds(120))
            result.notes.append(String(format: "standby promoted %.1f s after the kill; every worker ready again %.1f s after the promotion",
                                       (promoted - killed).seconds, (ContinuousClock.now - promoted).seconds))
        }
        var again = 0
        for (id, code) in verified {
            if case .verified = try await verification.verifyPhone(verificationID: id, code: code, logger: logger) { again += 1 }
        }
        result.require(again == 0, "\(again) codes verified before the failover verified again after it")
        result.notes.append("\(verified.count) codes verified before the failover, \(again) accepted again after it")
        try await cluster("pg-rebuild-standby", timeout: .seconds(300))
        return result
    }

    /// `scripts/cluster.sh ARGS`: its standard output.
    @discardableResult
    func cluster(_ arguments: String..., timeout: Duration = .seconds(180)) async throws -> String {
        let script = ProcessInfo.processInfo.environment["HERALD_CLUSTER_SCRIPT"] ?? "scripts/cluster.sh"
        return try await ChildProcess.run(script, arguments, timeout: timeout)
    }

    /// The node (1, 2 or 3) leading quorum queue `queue`.
    private func leader(of queue: String) async throws -> Int {
        let name = try await cluster("rabbit-leader", queue).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let match = name.firstMatch(of: /herald-c(\d)@/), let node = Int(match.1) else { throw ChaosFailure("no leader for \(queue): '\(name)'") }
        return node
    }

    /// Runs `fault`, then waits until every worker is ready. Then, from the workers' logs: for
    /// each worker whose broker connection broke after the fault began, when it broke and how
    /// long until it was connected again (its lines `AMQP connection lost` and `AMQP connection
    /// re-established`, to the millisecond; a reconnect takes milliseconds, far below what
    /// polling `/readyz` sees).
    private func outages(_ fault: () async throws -> Void) async throws -> [String: Outage] {
        let start = Date()
        try await fault()
        try await fleet.waitUntilReady(timeout: .seconds(120))
        var outages: [String: Outage] = [:]
        for file in fleet.logFiles {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            var lost: Date?
            for line in text.split(separator: "\n") {
                guard let time = Self.timestamp(line), time >= start else { continue }
                if line.contains("AMQP connection lost") {
                    lost = lost ?? time
                } else if line.contains("AMQP connection re-established"), let broke = lost {
                    let name = URL(fileURLWithPath: file).lastPathComponent
                    var outage = outages[name] ?? Outage(firstLost: broke.timeIntervalSince(start), longest: 0, lastBack: 0)
                    outage.longest = max(outage.longest, time.timeIntervalSince(broke))
                    outage.lastBack = time.timeIntervalSince(start)
                    outages[name] = outage
                    lost = nil
                }
            }
        }
        return outages
    }

    struct Outage {
        /// Seconds from the fault's start until the worker's connection first broke.
        var firstLost: Double
        /// The longest time it was without a connection.
        var longest: Double
        /// Seconds from the fault's start until it was last connected again.
        var lastBack: Double
    }

    private static func timestamp(_ line: Substring) -> Date? {
        guard let range = line.range(of: #""ts":""#), let end = line[range.upperBound...].firstIndex(of: "\"") else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: String(line[range.upperBound..<end]))
    }

    /// "N of M workers lost their broker connection, the first X s after the fault began; each
    /// was connected again within Y s; the last Z s after the fault began".
    static func describe(_ outages: [String: Outage], of workers: Int) -> String {
        guard !outages.isEmpty else { return "no worker lost its broker connection (0 of \(workers))" }
        return String(format: "%d of %d workers lost their broker connection, the first %.1f s after the fault began; each was connected again within %.3f s; the last %.1f s after the fault began",
                      outages.count, workers, outages.values.map(\.firstLost).min() ?? 0, outages.values.map(\.longest).max() ?? 0,
                      outages.values.map(\.lastBack).max() ?? 0)
    }

    /// After a heal: three running nodes. The partitioned node not back within 60 s is stuck in
    /// RabbitMQ itself (3.10's global:sync after a heal, cluster.sh rabbit-unstick): it is freed
    /// as an operator would, and the note says so; not running 120 s later fails the scenario.
    private func clusterWhole(partitioned node: Int, _ result: inout ScenarioResult) async throws {
        let started = ContinuousClock.now
        func whole(within seconds: Double) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let status = try? await cluster("rabbit-status"), status.components(separatedBy: ": running (pid").count - 1 >= 3 { return true }
                try await Task.sleep(for: .seconds(1))
            }
            return false
        }
        if try await whole(within: 60) { return }
        try await cluster("rabbit-unstick", String(node), timeout: .seconds(180))
        guard try await whole(within: 120) else {
            throw ChaosFailure("the cluster did not have three running nodes again within 180 s of the heal, node \(node) unstuck included")
        }
        result.notes.append(String(format: "node %d did not run again within 60 s of the heal (RabbitMQ stuck in global:sync); freed by cluster.sh rabbit-unstick, all three running %.0f s after the heal",
                                   node, (ContinuousClock.now - started).seconds))
    }
}
