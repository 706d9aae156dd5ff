import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldStubs
import Logging
import NIOCore
import NIOSSL
import PostgresNIO

/// APNs over HTTP/2 against the local APNs server (TLS, JWT verified on every request):
/// Herald's provider client (`APNsProvider`: cached ES256 JWT, headers, payload with a fresh
/// secret, answer mapping, metrics, `push.apns.connections` connections) next to a baseline
/// client doing the same requests with a bare AsyncHTTPClient (one client, a JWT made once,
/// no bookkeeping), in the same invocation, at the same concurrency.
struct PushBenchmark {
    var count: Int
    var concurrency: Int
    var connections: Int
    var logger: Logger

    struct Result {
        var bench: BenchResult
        var connections: Int
        var peakStreams: Int
    }

    func run() async throws -> [Result] {
        let tls = try await TestTLS.make()
        defer { tls.remove() }
        let key = P256.Signing.PrivateKey()
        let credentials = APNsStubServer.Credentials(publicKey: key.publicKey, keyID: "BENCHKEY01", teamID: "BENCHTEAM1")
        var results: [Result] = []

        // Baseline: a bare AsyncHTTPClient, one JWT made up front.
        do {
            let server = try await APNsStubServer(tls: tls, credentials: credentials, record: false)
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            tlsConfiguration.trustRoots = .file(tls.caFile)
            var configuration = HTTPClient.Configuration(tlsConfiguration: tlsConfiguration)
            configuration.httpVersion = .automatic
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
            let cache = try APNsTokenCache(pem: key.pemRepresentation, keyID: "BENCHKEY01", teamID: "BENCHTEAM1", refreshInterval: 3000)
            let jwt = await cache.token()
            let body = ByteBuffer(string: #"{"aps":{"content-available":1},"herald":{"receipt":"bench-receipt-000000","secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}"#)
            let token = String(repeating: "ab", count: 32)
            let url = "\(server.baseURL)/3/device/\(token)"
            let expiration = String(Int(Date().timeIntervalSince1970) + 300)
            // Shut down on every path: an HTTPClient freed without it traps.
            let measured: Swift.Result<BenchResult, any Error>
            do { measured = .success(try await measure("baseline: bare AsyncHTTPClient, same requests") { _ in
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "authorization", value: "bearer \(jwt)")
                request.headers.add(name: "apns-push-type", value: "background")
                request.headers.add(name: "apns-priority", value: "5")
                request.headers.add(name: "apns-topic", value: "com.example.bench")
                request.headers.add(name: "apns-expiration", value: expiration)
                request.body = .bytes(body)
                let response = try await client.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 4096)
                return response.status.code == 200
            }) } catch { measured = .failure(error) }
            try await client.shutdown()
            await server.close()
            results.append(Result(bench: try measured.get(), connections: server.connectionCount, peakStreams: server.peakConcurrentStreams))
        }

        // Herald's APNs provider client.
        do {
            let server = try await APNsStubServer(tls: tls, credentials: credentials, record: false)
            var apns = PushConfiguration.APNs()
            apns.productionHost = server.baseURL
            apns.sandboxHost = server.baseURL
            apns.caFile = tls.caFile
            apns.connections = connections
            // Spread the load: each connection takes its share of the requests in flight.
            apns.streamsPerConnection = max(1, min(1000, concurrency / connections))
            let cache = try APNsTokenCache(pem: key.pemRepresentation, keyID: "BENCHKEY01", teamID: "BENCHTEAM1", refreshInterval: 3000)
            let provider = try APNsProvider(configuration: apns, tokens: cache)
            let database = PostgresClient(configuration: .init(host: "127.0.0.1", username: "unused", password: nil, database: nil, tls: .disable))
            let token = String(repeating: "ab", count: 32)
            // The secrets are made up front: this measures the provider client (the handler makes
            // each secret before its database round trip, outside the provider call).
            let secrets = (0..<max(count, 1)).map { _ in SecretGenerator.token(bytes: 32) }
            let bench = try await measure("herald APNsProvider, \(connections) connection\(connections == 1 ? "" : "s")") { n in
                let message = PushMessage(receipt: "bench-receipt-\(n)", secret: secrets[max(n, 0) % secrets.count], deviceToken: token,
                                          platform: .apns, environment: .production, appID: "com.example.bench",
                                          expiresAt: Date().addingTimeInterval(300), messageID: "bench-\(n)")
                let answer = await provider.send(message, context: DeliveryContext(logger: logger, database: database))
                if case .accepted = answer.disposition { return true }
                return false
            }
            results.append(Result(bench: bench, connections: server.connectionCount, peakStreams: server.peakConcurrentStreams))
            if cache.signatureCount != 1 { print("herald-bench push: \(cache.signatureCount) JWTs signed (expected 1)") }
            await server.close()
        }
        return results
    }

    /// `count` calls of `push`, `concurrency` at a time (after a warm-up of 200).
    func measure(_ name: String, _ push: @escaping @Sendable (Int) async throws -> Bool) async throws -> BenchResult {
        for n in 0..<200 { _ = try await push(-n - 1) }
        let watch = Stopwatch()
        let next = Counter()
        let failures = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while true {
                        let n = next.increment()
                        if n >= count { return }
                        watch.start("\(n)")
                        if try await !push(n) { _ = failures.increment() }
                        watch.finish("\(n)")
                    }
                }
            }
            try await group.waitForAll()
        }
        if failures.value > 0 { print("herald-bench push: \(name): \(failures.value) pushes not accepted") }
        return watch.result(name)
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() -> Int { lock.withLock { defer { n += 1 }; return n } }
        var value: Int { lock.withLock { n } }
    }
}
