import Foundation

/// The report: a table on standard output and in `report.md`, the figures in `report.json`.
struct Report {
    var results: [ScenarioResult]
    var options: ChaosOptions
    var workers: [String]

    var passed: Bool { results.allSatisfy(\.passed) }

    var markdown: String {
        var lines = [
            "herald-chaos \(options.short ? "(short)" : "(full)"): \(workers.count) workers (\(workers.joined(separator: ", "))), heartbeat \(options.heartbeatSeconds) s, \(ProcessInfo.processInfo.activeProcessorCount) cores",
            "",
            "| scenario | published | completed | lost | failed | dead-lettered | duplicated sends | sent after a refusal | kills | recovery s | time s | result |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for r in results {
            let recovery = r.recoverySeconds.map { String(format: "%.1f", $0) } ?? "-"
            lines.append("| \(r.name) | \(r.published) | \(r.completed) | \(r.lost) | \(r.failed) | \(r.deadLettered) | \(r.duplicateSends) | \(r.sentAfterRefusal) | \(r.kills) | \(recovery) | \(String(format: "%.0f", r.seconds)) | \(r.passed ? "pass" : "FAIL") |")
        }
        lines.append("")
        for r in results {
            lines.append("- **\(r.name)**")
            for note in r.notes { lines.append("  - \(note)") }
            // Every duplicated send by name: which job, which provider, and whether Herald's
            // record counted it as uncertain (a duplicate it did not count fails the scenario).
            if !r.duplicates.isEmpty {
                lines.append("  - duplicated sends (\(r.duplicateSends), \(r.hiddenDuplicateSends) not counted as uncertain):")
                for duplicate in r.duplicates { lines.append("    - \(duplicate.line)") }
            }
            if !r.deadLetterReasons.isEmpty {
                lines.append("  - dead-letter reasons: " + r.deadLetterReasons.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            for failure in r.failures { lines.append("  - FAILED: \(failure)") }
        }
        return lines.joined(separator: "\n")
    }

    var json: [String: Any] {
        [
            "short": options.short, "workers": workers, "passed": passed,
            "scenarios": results.map { r -> [String: Any] in
                ["name": r.name, "published": r.published, "completed": r.completed, "lost": r.lost, "failed": r.failed,
                 "dead_lettered": r.deadLettered, "dead_letter_reasons": r.deadLetterReasons, "duplicated_sends": r.duplicateSends, "hidden_duplicated_sends": r.hiddenDuplicateSends,
                 "duplicates": r.duplicates.map(\.json),
                 "missing_sends": r.missingSends, "sent_after_refusal": r.sentAfterRefusal, "kills": r.kills, "recovery_seconds": r.recoverySeconds as Any? ?? NSNull(),
                 "seconds": r.seconds, "notes": r.notes, "failures": r.failures, "passed": r.passed]
            },
        ]
    }

    func write(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(markdown.utf8).write(to: URL(fileURLWithPath: "\(directory)/report.md"))
        let data = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: "\(directory)/report.json"))
    }
}
