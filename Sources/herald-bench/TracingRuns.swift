import Foundation
import HeraldRuntime
import HeraldStubs
import Logging

/// What tracing costs a herald-sms process (issue 34): one process, controls off, with tracing
/// off (the shipped default), then on and exporting every span over OTLP/HTTP (protobuf, the
/// default protocol) to a local receiver, then on with 10 % of traces sampled, at the shipped
/// `tracing.*` settings. Each row's worker CPU per job is the figure, and the spans the receiver
/// counted; the receiver runs in herald-bench (its CPU is the bench's).
/// A sent SMS job's spans: process, decode, claim, handle, send (provider), POST, commit, ack.
let spansPerJob = 8.0

func tracingRuns(count: Int, configuration: HeraldConfiguration, logger: Logger) async throws -> [BenchResult] {
    let receiver = try await OTLPReceiver()
    defer { Task { await receiver.close() } }
    let on = ["HERALD_TRACING_ENABLED": "true", "HERALD_TRACING_ENDPOINT": receiver.endpoint]
    var results = [try await smsProcesses(count: count, processes: 1, variant: ("tracing off", [:]), configuration: configuration, logger: logger)]
    for (name, ratio) in [("tracing on", "1"), ("tracing on, 10 % sampled", "0.1")] {
        let before = receiver.requests.count
        var result = try await smsProcesses(count: count, processes: 1, variant: (name, on.merging(["HERALD_TRACING_SAMPLE_RATIO": ratio]) { $1 }),
                                            configuration: configuration, logger: logger)
        // The spans received next to those the jobs made (the last arrive at the worker's shutdown, before smsProcesses returns).
        let spans = OTLPReceiver.protobufSpanCount(receiver.requests.dropFirst(before))
        let expected = Int(Double(count) * spansPerJob * (Double(ratio) ?? 1))
        result.name += " (\(spans) of ~\(expected) spans)"
        results.append(result)
    }
    return results
}
