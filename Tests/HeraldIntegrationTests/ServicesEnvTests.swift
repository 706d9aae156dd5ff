import Foundation
import HeraldStubs
import Testing
@testable import HeraldRuntime

/// `eval "$(scripts/services.sh env)"` is what operators are told to run: it may set only the
/// configuration overrides it means (the servers' URLs and the local PostgreSQL's CA); everything else is HERALD_DEV_*,
/// which no configuration key reads, so `heraldctl config check` prints the same with or without it.
@Suite(.needsServers) struct ServicesEnvTests {
    @Test func theEnvCommandExportsOnlyIntendedOverridesAndDevValuesNoKeyReads() async throws {
        let runDirectory = NSTemporaryDirectory() + "herald-services-env-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: runDirectory) }
        var scriptEnvironment = ProcessInfo.processInfo.environment
        scriptEnvironment["HERALD_RUN_DIR"] = runDirectory
        let printed = try await ChildProcess.run(TestEnvironment.servicesScript, ["env"], environment: scriptEnvironment)
        var exported: [String: String] = [:]
        for line in printed.split(separator: "\n") where line.hasPrefix("export ") {
            let assignment = line.dropFirst("export ".count)
            let equals = try #require(assignment.firstIndex(of: "="))
            exported[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        let overrides: Set<String> = ["HERALD_AMQP_URL", "HERALD_DATABASE_URL", "HERALD_DATABASE_TLS_CA_FILE"]
        #expect(Set(exported.keys).isSuperset(of: overrides))
        #expect(overrides == [ConfigSource.environmentName(for: "amqp.url"), ConfigSource.environmentName(for: "database.url"),
                              ConfigSource.environmentName(for: "database.tls_ca_file")])
        let others = exported.keys.filter { !overrides.contains($0) }
        #expect(!others.isEmpty && others.allSatisfy { $0.hasPrefix("HERALD_DEV_") }, "\(others.sorted())")

        // The dev values change nothing a worker reads: config check prints the same.
        var base = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") }
        base["HERALD_SECRETS_HMAC_KEYS_FILE"] = TestEnvironment.hmacKeysFile
        base["HERALD_CONFIG"] = TestEnvironment.root.appendingPathComponent("Config/herald.yaml").path
        let withDev = base.merging(exported.filter { !overrides.contains($0.key) }) { _, dev in dev }
        func values(_ environment: [String: String]) async throws -> [String: Any] {
            let output = try await ChildProcess.run(TestEnvironment.binDir + "/heraldctl", ["config", "check", "--output", "json"], environment: environment)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "not JSON: \(output)")
            return try #require(object["values"] as? [String: Any])
        }
        let plain = try await values(base)
        let dev = try await values(withDev)
        func text(_ value: Any?) -> String {
            guard let value else { return "absent" }
            guard JSONSerialization.isValidJSONObject([value]), let data = try? JSONSerialization.data(withJSONObject: [value], options: [.sortedKeys]) else { return "\(value)" }
            return String(decoding: data, as: UTF8.self)
        }
        let changed = Set(plain.keys).union(dev.keys).filter { text(plain[$0]) != text(dev[$0]) }
        #expect(plain.count > 50 && changed.isEmpty, "HERALD_DEV_* changed the configuration: \(changed.sorted().map { "\($0): \(text(plain[$0])) → \(text(dev[$0]))" })")
        #expect(plain["outbox.directory"] as? String == "", "the dev spool stays off")
        // Every channel's keys and the fallback's are printed (issue 46).
        let channelKeys = ["sms.fallback.channels", "sms.fallback.max_paid_sends", "sms.fallback.after_seconds.sms", "sms.voice.ring_seconds",
                           "sms.whatsapp.template", "sms.whatsapp.access_token"]
        #expect(channelKeys.filter { plain[$0] == nil }.isEmpty, "missing: \(channelKeys.filter { plain[$0] == nil })")
        #expect(plain["sms.fallback.max_paid_sends"] as? Int == 2)
    }
}
