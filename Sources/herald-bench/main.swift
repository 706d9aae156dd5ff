import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWorkers
import Logging

// herald-bench [COUNT]: every figure next to a baseline measured in the same invocation.
//   runner     the job runner with the dev outbox, 1 and 2 in-process workers
//   sms        herald-sms end to end (webhook provider), 1 and 2 in-process workers, each with
//              the abuse controls off and on (SMSControls.swift)
//   processes  herald-sms as 1, 2 and 4 real processes on one queue, each with the abuse
//              controls off and on (SMSControls.environment), their memory (peak, at the end);
//              after the 1-process runs, one at half that rate, paced (BENCH_PACED_SECONDS,
//              default three of the pool's idle timeouts, so that its memory is the steady
//              one): the latency from publish to the provider under a load, next to the broker
//              alone at the same rate
//   paced      only that paced pair, at BENCH_PACED_RATE (default: half of a 1-process run's rate, printed too)
//   peer       the Go peer (bench/peers/go, issue 48: a lean Go worker doing the bare SMS job, Peer.swift), then the
//              Swift peer (the same job on herald-sms's libraries, Sources/herald-peer-swift), each at 16 and 64 jobs in flight, on the same broker, database, provider stub and load, next to herald-sms, 2 processes,
//              controls off and on; then Herald ÷ Go: jobs/s, machine CPU per job, each component's (PeerComparison.swift).
//              The whole bench runs it after the processes part's 2-process runs, compared with their controls-on run
//   cold       herald-sms, 1 in-process worker, with the abuse controls off and on: the first BENCH_COLD_COUNT
//              jobs (default 10,000; 0 skips) on an empty database created and migrated just before, next to
//              the next BENCH_COLD_COUNT on it through a new worker (ColdDatabase.swift); then, controls on, the
//              same burst after a slow start (BENCH_COLD_TRICKLE jobs, default 300, over about 80 s); also part of sms
// Every run of the first three parts prints the CPU ms per job of the broker, PostgreSQL, the
// worker processes and herald-bench (CPUMeter, from /proc); BENCH_STATEMENTS=1 adds the top
// pg_stat_statements of each SMS run (needs the library preloaded: scripts/services.sh).
// BENCH_ONLY=cpumeter checks CPUMeter's /proc reading on processes of known CPU.
//   cleanup    BENCH_CLEANUP_ACCOUNTS accounts (default 1,000,000; 0 skips) cleaned with the
//              configured pacing and with pacing off, with sign-in latency during each run next
//              to sign-in latency without it; BENCH_CLEANUP_SWEEP=1 adds the batch × workers ×
//              busy share sweep (CleanupBenchmark+Report.swift)
//   push       APNs over HTTP/2 to the local APNs server: Herald's provider client next to a
//              bare AsyncHTTPClient doing the same requests (BENCH_PUSH_COUNT, default 20,000;
//              BENCH_PUSH_CONCURRENCY, default 256; push.apns.connections); then as many
//              push.verification jobs end to end through 1 and 2 herald-push workers
//   email      herald's SMTP client (connections reused) to the local SMTP server, next to a
//              plain socket sender (a connection per message); BENCH_EMAIL_COUNT (default 2,000);
//              then as many email.action jobs end to end through 1 and 2 herald-email workers
//   api        herald-api (a release process) under wrk (issue 32, APIBenchmark.swift): start (publish + confirm)
//              and check (a wrong code), as fast as BENCH_API_CONNECTIONS connections (default 32, over
//              BENCH_API_THREADS wrk threads, default 2) get answers for BENCH_API_SECONDS (default 15), then paced
//              at BENCH_API_RATE req/s (default 500) for BENCH_API_PACED_SECONDS (default 30), each next to a bare
//              Hummingbird route under the same wrk settings and the AMQP baselines; herald-api's memory.
//              BENCH_API_SEED verifications for the checks (default 50,000), BENCH_API_OTHER_FAILURES other
//              numbers' wrong tries beside them (default 50,000; 0: an empty table, cold plans)
//   tracing    one herald-sms process with tracing off, on (every span exported over OTLP/HTTP to a local
//              receiver), and on with 10 % of traces sampled: worker CPU per job of each (TracingRuns.swift)
//   bigtable   the SMS job on 50 M-row tables (the ledger, sms_verifications, sms_codes: BENCH_BIG_ROWS each,
//              generated set-based in `<bench database>_big`, kept between invocations; BENCH_BIG_REBUILD=1 starts
//              it over) next to small tables, then BENCH_BIG_RATE sign-ins/s (default 300) for BENCH_BIG_SECONDS
//              (default 30) twice, the second time with the ledger's oldest day dropped halfway (BigTables.swift)
//   receipts   delivery receipts (issue 35, ReceiptsBenchmark.swift): the SMS job with one worker, its provider
//              naming each SMS, then one sms.receipt (delivered) per SMS, applied by one worker: receipts/s and
//              CPU per receipt per component next to the SMS job's
// BENCH_ONLY=runner|sms|cold|processes|paced|peer|tracing|receipts|cleanup|push|email|api|bigtable runs one part; the
// broker baseline runs with each of the first eight, with api and with bigtable.
let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 20_000
let environment = ProcessInfo.processInfo.environment
let only = environment["BENCH_ONLY"]
let cleanupAccounts = environment["BENCH_CLEANUP_ACCOUNTS"].flatMap(Int.init) ?? 1_000_000
let cleanupWorkers = environment["BENCH_CLEANUP_WORKERS"].flatMap(Int.init) ?? 2
var configuration = HeraldConfiguration.loadAllOrExit(path: nil, tool: "herald-bench", requireKeyRing: true)
configuration.amqp.namespace = "bench\(UUID().uuidString.prefix(6).lowercased())"
configuration.http.enabled = false
var logger = Logger(label: "herald-bench")
logger.logLevel = .error

/// `text` left-aligned in `width` columns, and at least one space after it when it is longer.
func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0) }
func runs(_ part: String) -> Bool { only == nil || only == part }

if only == "cpumeter" { try await cpuMeterSelfCheck() }

if runs("runner") || runs("sms") || runs("processes") || only == "paced" || only == "cold" || only == "peer" || runs("tracing") || runs("receipts") {
    // BENCH_STATEMENTS=1: pg_stat_statements reset before and read after each SMS run (Statements.swift).
    let statements = environment["BENCH_STATEMENTS"] == "1" ? try await BenchStatements(configuration: configuration.database, logger: logger) : nil
    let size = try await DatabaseSize.read(configuration: configuration.database, logger: logger)
    let baseline = try await brokerBaseline(count: count, configuration: configuration, logger: logger)
    var results = [baseline]
    var comparison = PeerComparison()
    if runs("runner") {
        for workers in [1, 2] {
            results.append(try await runnerEndToEnd(count: count, workers: workers, configuration: configuration, logger: logger))
        }
    }
    if runs("sms") {
        for workers in [1, 2] {
            results.append(try await smsEndToEnd(count: count, workers: workers, statements: statements, configuration: configuration, logger: logger))
            // The same run with every abuse control on (SMSControls): their cost per job.
            results.append(try await smsEndToEnd(count: count, workers: workers, controls: true, statements: statements, configuration: configuration, logger: logger))
        }
    }
    let coldCount = environment["BENCH_COLD_COUNT"].flatMap(Int.init) ?? 10_000
    if (runs("sms") || only == "cold") && coldCount > 0 {
        // A fresh deployment's first burst (issue 31): an empty database's first jobs, next to the jobs after them.
        for controls in [false, true] {
            results += try await smsColdAndWarm(count: coldCount, controls: controls, configuration: configuration, logger: logger)
        }
        // The same burst after a slow start (BENCH_COLD_TRICKLE jobs over about 80 s; 0 skips), controls on.
        let trickle = environment["BENCH_COLD_TRICKLE"].flatMap(Int.init) ?? 300
        if trickle > 0 {
            results.append(try await smsColdAfterTrickle(count: coldCount, trickle: trickle, controls: true, configuration: configuration, logger: logger))
        }
    }
    if only == "paced" {
        // The paced runs alone, at BENCH_PACED_RATE (jobs/s), or at half the rate of a 1-process run with the controls on,
        // measured first and printed with them.
        var rate = environment["BENCH_PACED_RATE"].flatMap(Double.init) ?? 0
        if rate <= 0 {
            let controlled = try await smsProcesses(count: count, processes: 1, controls: true, statements: statements,
                                                  configuration: configuration, logger: logger)
            results.append(controlled)
            rate = controlled.rate / 2
        }
        results += try await pacedRuns(rate: rate, statements: statements)
    }
    if runs("processes") {
        for processes in [1, 2, 4] {
            results.append(try await smsProcesses(count: count, processes: processes, statements: statements, configuration: configuration, logger: logger))
            let controlled = try await smsProcesses(count: count, processes: processes, controls: true, statements: statements, configuration: configuration, logger: logger)
            results.append(controlled)
            // Latency under a load, not a backlog: half the rate just measured.
            if processes == 1 { results += try await pacedRuns(rate: controlled.rate / 2, statements: statements) }
            // The whole bench: the Go peer beside the 2-process runs (issue 48), compared with the controls-on one
            // (BENCH_ONLY=processes leaves it out: bench.sh builds the peer for the whole bench and BENCH_ONLY=peer only).
            if processes == 2 && only == nil {
                comparison.herald = controlled
                comparison.peers = try await Peer.runs(count: count, configuration: configuration, logger: logger)
                results += comparison.peers
            }
        }
    }
    if only == "peer" {
        // The controls-off pair of the compared run first: what the abuse controls add, in the same invocation.
        results.append(try await smsProcesses(count: count, processes: 2, statements: statements, configuration: configuration, logger: logger))
        let controlled = try await smsProcesses(count: count, processes: 2, controls: true, statements: statements,
                                                configuration: configuration, logger: logger)
        comparison.herald = controlled
        results.append(controlled)
        comparison.peers = try await Peer.runs(count: count, configuration: configuration, logger: logger)
        results += comparison.peers
    }
    if runs("receipts") {
        // Delivery receipts applied, next to the SMS jobs that sent what they report on (issue 35, ReceiptsBenchmark.swift).
        results += try await smsReceipts(count: count, configuration: configuration, logger: logger)
    }
    if runs("tracing") {
        // Tracing's cost per job, off (free: no tracer) next to on (issue 34, TracingRuns.swift).
        results += try await tracingRuns(count: count, configuration: configuration, logger: logger)
    }
    await statements?.close()
    printRuns(results, count: count, size: size, configuration: configuration)
    comparison.print()
}

if runs("bigtable") {
    let rows = environment["BENCH_BIG_ROWS"].flatMap(Int.init) ?? 50_000_000
    let rate = environment["BENCH_BIG_RATE"].flatMap(Double.init) ?? 300
    let seconds = environment["BENCH_BIG_SECONDS"].flatMap(Double.init) ?? 30
    let size = try await DatabaseSize.read(configuration: configuration.database, logger: logger)
    let baseline = try await brokerBaseline(count: count, configuration: configuration, logger: logger)
    let big = try await BigTables.runs(count: count, rows: rows, rate: rate, seconds: seconds, configuration: configuration, logger: logger)
    printRuns([baseline] + big, count: count, size: size, configuration: configuration)
}

/// The paced runs at `rate` jobs/s for BENCH_PACED_SECONDS (default three idle timeouts of the pool, 30 s by default: its
/// peak memory is the steady one, not a short run's): the broker alone, the latency floor, then one herald-sms process
/// with the controls on.
@MainActor func pacedRuns(rate: Double, statements: BenchStatements?) async throws -> [BenchResult] {
    let seconds = environment["BENCH_PACED_SECONDS"].flatMap(Double.init) ?? Double(3 * configuration.database.idleTimeoutSeconds)
    let count = max(Int(rate * seconds), 1)
    return [try await brokerBaseline(count: count, pacedRate: rate, configuration: configuration, logger: logger),
            try await smsProcesses(count: count, processes: 1, controls: true, pacedRate: rate, statements: statements,
                                   configuration: configuration, logger: logger)]
}

if runs("email") {
    let emails = environment["BENCH_EMAIL_COUNT"].flatMap(Int.init) ?? 2_000
    let concurrency = environment["BENCH_EMAIL_CONCURRENCY"].flatMap(Int.init) ?? 4
    let results = try await emailBenchmarks(count: emails, concurrency: concurrency, logger: logger)
    let baseline = results[0]
    print("\nherald-bench email: \(emails) messages each to the local SMTP server (aiosmtpd), \(concurrency) senders at once, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print(pad("run", 50) + pad("msg/s", 10) + pad("p50 ms", 9) + pad("p99 ms", 9) + "vs baseline")
    for result in results {
        print(pad(result.name, 50) + pad(String(format: "%.0f", result.rate), 10) + pad(String(format: "%.2f", result.p50), 9)
              + pad(String(format: "%.2f", result.p99), 9) + String(format: "%.2f", result.rate / max(baseline.rate, 1)))
    }
    // The same count of email.action jobs end to end through herald-email workers (EmailEndToEnd.swift).
    try await EmailEndToEnd(count: emails, configuration: configuration, logger: logger).run(clientBaseline: results.last)
}

if runs("cleanup") && cleanupAccounts > 0 {
    try await CleanupBenchmark.report(accounts: cleanupAccounts, workers: cleanupWorkers, environment: environment, configuration: configuration, logger: logger)
}

if runs("push") {
    let pushes = environment["BENCH_PUSH_COUNT"].flatMap(Int.init) ?? 20_000
    let concurrency = environment["BENCH_PUSH_CONCURRENCY"].flatMap(Int.init) ?? 256
    let results = try await PushBenchmark(count: pushes, concurrency: concurrency, connections: configuration.push.apns.connections, logger: logger).run()
    print("\nherald-bench push: \(pushes) pushes each over HTTP/2 + TLS to the local APNs server, \(concurrency) in flight, \(ProcessInfo.processInfo.activeProcessorCount) cores")
    print(pad("run", 52) + pad("pushes/s", 10) + pad("p50 ms", 9) + pad("p99 ms", 9) + pad("conns", 7) + pad("peak streams/conn", 19) + "vs baseline")
    let base = results[0].bench.rate
    for result in results {
        print(pad(result.bench.name, 52) + pad(String(format: "%.0f", result.bench.rate), 10) + pad(String(format: "%.1f", result.bench.p50), 9)
              + pad(String(format: "%.1f", result.bench.p99), 9) + pad(String(result.connections), 7) + pad(String(result.peakStreams), 19)
              + String(format: "%.2f", result.bench.rate / max(base, 1)))
    }
    // The same count of push.verification jobs end to end through herald-push workers (PushEndToEnd.swift).
    try await PushEndToEnd(count: pushes, configuration: configuration, logger: logger).run(clientBaseline: results.last?.bench)
}

if runs("api") {
    var benchmark = APIBenchmark(configuration: configuration, logger: logger, brokerCount: count, environment: environment)
    // BENCH_STATEMENTS=1: the top pg_stat_statements of each herald-api run too (per request: calls/job).
    benchmark.statements = environment["BENCH_STATEMENTS"] == "1" ? try await BenchStatements(configuration: configuration.database, logger: logger) : nil
    let report = try await benchmark.run()
    await benchmark.statements?.close()
    benchmark.printReport(report)
}
