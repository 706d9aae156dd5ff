import Foundation
import HeraldCleanup
import HeraldEmail
import HeraldPhone
import HeraldPhoneCheck
import HeraldPush
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging

/// `herald-sms` end to end: HeraldClient publishes `sms.verification` jobs; the real
/// PhoneHandler decides each in PostgreSQL (code hashed, rate limits counted), renders it and
/// sends it to a local webhook provider (Standard Webhooks signed); the watch stops when the
/// outcome commits (the ack follows at once). Every job has its own random number (the
/// numbers of many people, spread over many prefixes), so every job sends one SMS.
///
/// `controls`: the abuse controls on (``SMSControls/on(_:)``); off, the same run without them.
/// `messageIDs`: the provider answers each SMS with a message id of its own, `<prefix>-1`,
/// `<prefix>-2`, … (the receipts run names them); else all with `bench`.
func smsEndToEnd(count: Int, workers: Int, controls: Bool = false, statements: BenchStatements? = nil, messageIDs prefix: String? = nil,
                 configuration base: HeraldConfiguration, logger: Logger) async throws -> BenchResult {
    let sent = Counter()
    let provider = try await StubHTTPServer { _ in
        .init(status: 200, body: #"{"message_id":"\#(prefix.map { "\($0)-\(sent.next())" } ?? "bench")"}"#)
    }
    var configuration = base
    configuration.sms.providers = [.webhook]
    configuration.sms.webhook.url = provider.baseURL + "/sms"
    configuration.sms.webhook.secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    // The abuse limits are not what is measured here.
    let unlimited = SMSConfiguration.Limit(max: 100_000_000, windowSeconds: 3600)
    configuration.sms.phoneLimit = unlimited
    configuration.sms.prefixLimit = unlimited
    configuration.sms.globalLimit = unlimited
    // The fraud guard is on in the shipped configuration: the "controls off" rows turn it off.
    if controls { SMSControls.on(&configuration.sms) } else { configuration.sms.fraudGuard.enabled = false }

    // n ↦ n × 2654435761 mod 10⁹ is a bijection (the factor is prime to 10): distinct numbers, spread over every prefix.
    let offset = Int.random(in: 0..<1_000_000_000)
    let counter = Counter()
    let result = try await workersEndToEnd(
        count: count, workers: workers, configuration: configuration, logger: logger, statements: statements,
        name: "herald-sms, \(workers) worker\(workers == 1 ? "" : "s") (webhook)\(controls ? ", controls on" : "")",
        makeHandler: { TimedHandler(inner: try PhoneHandler(configuration: configuration), watch: $0) },
        job: { id in
            let n = (counter.next() + offset) % 1_000_000_000
            return SMSVerificationJob(verificationID: id, phoneNumber: "+4917" + String(format: "%09d", (n * 2_654_435_761) % 1_000_000_000), locale: "en")
        })
    let received = provider.requestCount
    await provider.close()
    guard received >= count else { throw BenchFailure("the provider received \(received) of \(count) SMS") }
    return result
}

/// Numbers for the jobs, one each.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
