import Crypto
import Foundation
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging
import Synchronization

/// `herald-push` end to end: HeraldClient publishes `push.verification` jobs (APNs, each its
/// own device token and receipt); in-process workers assembled as the executable assembles
/// them (`PushWorker.handler` with `push.delivery: live`, `WorkerServices`) decide each in
/// PostgreSQL (`herald.push_prepare`: the receipt and its hashed secret stored, the device
/// token's row and rate window), push over HTTP/2 + TLS to the local APNs server
/// (`HeraldStubs/APNsStubServer`, in this process, the JWT verified on every request),
/// record `sent` and the token's success, commit the outcome with `push.sent` and ack.
/// The watch stops when the outcome commits. The run fails unless the APNs server accepted
/// a push for every job's token.
struct PushEndToEnd {
    var count: Int
    var configuration: HeraldConfiguration
    var logger: Logger

    /// The broker baseline, then 1 and 2 workers; printed with `clientBaseline` (the APNs
    /// provider client alone, from ``PushBenchmark``) as a second ratio.
    func run(clientBaseline: BenchResult?) async throws {
        let tls = try await TestTLS.make()
        defer { tls.remove() }
        var rows = [try await brokerBaseline(count: count, configuration: configuration, logger: logger)]
        for workers in [1, 2] {
            rows.append(try await endToEnd(workers: workers, tls: tls))
        }
        print("\nherald-bench push end to end: \(count) push.verification jobs each (apns, a device token each), HTTP/2 + TLS to the local APNs server "
              + "(in the bench process), \(configuration.push.apns.connections) connections shared by the workers (per process, as in herald-push), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        printEndToEnd(rows, client: clientBaseline.map { ("vs APNs client", $0) })
    }

    /// `workers` in-process herald-push workers; fails unless the APNs server accepted a push
    /// for each job's token.
    func endToEnd(workers: Int, tls: TestTLS) async throws -> BenchResult {
        let key = P256.Signing.PrivateKey()
        let credentials = APNsStubServer.Credentials(publicKey: key.publicKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
        let tally = TokenTally()
        let server = try await APNsStubServer(tls: tls, credentials: credentials, record: false) { request in
            tally.add(request.token)
            return .ok
        }
        var configuration = self.configuration
        configuration.push.delivery = .live
        configuration.push.apns.key = key.pemRepresentation
        configuration.push.apns.keyID = "BENCHKEY01"
        configuration.push.apns.teamID = "BENCHTEAM1"
        configuration.push.apns.productionHost = server.baseURL
        configuration.push.apns.sandboxHost = server.baseURL
        configuration.push.apns.caFile = tls.caFile

        let result: BenchResult
        do {
            result = try await workersEndToEnd(
                count: count, workers: workers, configuration: configuration, logger: logger,
                name: "herald-push, \(workers) worker\(workers == 1 ? "" : "s") (APNs)",
                makeHandler: { TimedHandler(inner: try PushWorker.handler(configuration: configuration), watch: $0) },
                job: { id in
                    // A token of this job alone (64 hex digits): a new device, so no rate window is shared.
                    let token = SHA256Hex.of(id)
                    return PushVerificationJob(receipt: id, deviceToken: token, platform: .apns, environment: .production, appID: "com.example.bench")
                })
        } catch {
            await server.close()
            throw error
        }
        await server.close()
        let (distinct, total) = tally.counts
        let violations = server.violations
        guard violations.isEmpty else {
            throw BenchFailure("the APNs server refused \(violations.count) requests (first: \(violations[0].0) \(violations[0].1))")
        }
        guard distinct >= count else { throw BenchFailure("the APNs server received pushes for \(distinct) of \(count) device tokens") }
        if total > distinct { print("herald-bench push: \(total - distinct) pushes sent twice") }
        return result
    }

    /// The device tokens the APNs server accepted pushes for.
    final class TokenTally: Sendable {
        private let state = Mutex((tokens: Set<String>(), total: 0))
        func add(_ token: String) { state.withLock { $0.tokens.insert(token); $0.total += 1 } }
        var counts: (distinct: Int, total: Int) { state.withLock { ($0.tokens.count, $0.total) } }
    }
}
