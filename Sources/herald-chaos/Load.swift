import AMQP
import Foundation
import HeraldApple
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWire
import NIOConcurrencyHelpers

/// Publishes jobs as a front API does (HeraldClient, publisher confirms, `mandatory`) and
/// remembers every job the broker confirmed: those are the jobs that must not be lost. A
/// publish that fails (the broker is down) is tried again with the same message id until
/// it is confirmed, as a front API's outbox would.
final class Load: Sendable {
    let client: HeraldClient
    /// Makes the apple jobs (an account linked to an Apple identity, a code the local Apple issued).
    let apple: AppleGateway
    let run: String
    private let confirmed = NIOLockedValueBox<[String: JobKind]>([:])
    private let counter = NIOLockedValueBox(0)
    /// While on, one SMS job in twenty asks for `[sms, whatsapp]` (the kill scenario's fallbacks).
    private let fallbacks = NIOLockedValueBox<(on: Bool, numbers: [String: String])>((false, [:]))

    /// Turns the fallback share of the SMS jobs on or off.
    func withFallbacks(_ on: Bool) { fallbacks.withLockedValue { $0.on = on } }
    /// Job id → number (E.164) of each fallback verification published.
    var fallbackNumbers: [String: String] { fallbacks.withLockedValue { $0.numbers } }

    /// The number of SMS job `n`: one of its own (re-entrancy and the per-number limits never join two jobs).
    func number(_ n: Int) -> String {
        "+4917" + String(format: "%09d", (n * 2_654_435_761 + Int(run, radix: 16)!) % 1_000_000_000)
    }

    init(client: HeraldClient, apple: AppleGateway) {
        self.client = client
        self.apple = apple
        run = String(UUID().uuidString.prefix(6).lowercased())
    }

    /// Every job id of this load starts with it.
    var idPrefix: String { "c\(run)-" }

    var published: [String: JobKind] { confirmed.withLockedValue { $0 } }

    /// The mix of a mixed load: half SMS, a quarter email, a fifth push, and a cleanup run
    /// (dry run) every thousandth job.
    static func mixed(_ n: Int) -> JobKind {
        if n % 1000 == 999 { return .cleanup }
        switch n % 20 { case 0..<10: return .sms; case 10..<15: return .email; case 15..<19: return .push; default: return .sms }
    }

    /// The mixed load with apple jobs: one job in twenty is an apple job (`apple.token` and
    /// `apple.revoke` alternating), in place of an SMS.
    static func mixedWithApple(_ n: Int) -> JobKind {
        n % 20 == 19 ? .apple : mixed(n)
    }

    /// Publishes `count` valid jobs from `lanes` concurrent publishers, at most `perSecond`
    /// of them per second when given (so a load spans the faults); returns their ids.
    @discardableResult
    func publish(_ count: Int, perSecond: Double? = nil, lanes: Int = 16, kind: @escaping @Sendable (Int) -> JobKind = Load.mixed) async -> [String] {
        let start = ContinuousClock.now
        let base = reserve(count)
        await Self.inLanes(count, lanes: lanes) { i in
            let n = base + i
            if let perSecond { try? await Task.sleep(until: start + .seconds(Double(i) / perSecond)) }
            await self.publishUntilConfirmed(id: self.idPrefix + String(n), n: n, kind: kind(n))
        }
        return (0..<count).map { idPrefix + String(base + $0) }
    }

    private func publishUntilConfirmed(id: String, n: Int, kind: JobKind) async {
        // An apple job's account and code are made once: every try publishes the same job.
        var appleJob: AppleGateway.LoadJob?
        while kind == .apple, appleJob == nil {
            do { appleJob = try await apple.job(id: id) } catch { try? await Task.sleep(for: .milliseconds(250)) }
        }
        while true {
            do {
                switch kind {
                case .sms:
                    let number = number(n)
                    // The webhook gateway sends no receipts: a fallback verification's WhatsApp goes out after the SMS's wait.
                    let fallback = n % 20 == 3 && fallbacks.withLockedValue { $0.on }
                    if fallback { fallbacks.withLockedValue { $0.numbers[id] = number } }
                    try await client.enqueue(SMSVerificationJob(verificationID: id, phoneNumber: number, locale: ["en", "de", "fr", "pt-BR"][n % 4],
                                                                channels: fallback ? [.sms, .whatsapp] : nil), messageID: id)
                case .email:
                    try await client.enqueue(EmailActionJob(requestID: id, email: MailGateway.address(for: id), mode: .signIn, locale: "en",
                                                            actionCodeSettings: .init(url: "https://app.example.com/finish?n=\(n)", handleCodeInApp: true)), messageID: id)
                case .push:
                    let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                    try await client.enqueue(PushVerificationJob(receipt: id, deviceToken: token, platform: .apns, environment: .sandbox, appID: "com.example.app"), messageID: id)
                case .cleanup:
                    try await client.enqueue(CleanupRunJob(runID: id, dryRun: true), messageID: id)
                case .apple:
                    switch appleJob {
                    case .token(let job)?: try await client.enqueue(job, messageID: id)
                    case .revoke(let job)?: try await client.enqueue(job, messageID: id)
                    case nil: preconditionFailure("an apple job is made before it is published")
                    }
                }
                confirmed.withLockedValue { $0[id] = kind }
                return
            } catch {
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    /// Publishes `count` mixed valid jobs with the malformed messages spread evenly among them,
    /// as one ordered stream (so every queue holds them interleaved); returns the valid ids.
    func publish(_ count: Int, among malformed: [Poison.Message], lanes: Int = 16) async -> [String] {
        let base = reserve(count)
        let total = count + malformed.count
        await Self.inLanes(total, lanes: lanes) { i in
            // Position i is the valid job number i·count/total when that number steps up at i.
            let before = i * count / total
            if (i + 1) * count / total > before {
                let n = base + before
                await self.publishUntilConfirmed(id: self.idPrefix + String(n), n: n, kind: Load.mixed(n))
            } else {
                let message = malformed[i - before]
                while (try? await self.client.publishRaw(body: message.body, routingKey: message.routingKey, properties: message.properties)) == nil {
                    try? await Task.sleep(for: .milliseconds(250))
                }
            }
        }
        return (0..<count).map { idPrefix + String(base + $0) }
    }

    /// The first of `count` job numbers no other publish uses.
    private func reserve(_ count: Int) -> Int {
        counter.withLockedValue { c in
            defer { c += count }
            return c
        }
    }

    /// Runs `body` for 0..<count from `lanes` concurrent tasks, each taking the next index, as
    /// a front API's many request handlers publish side by side (a lone publisher waiting for
    /// each confirm would make the broker sync every message on its own).
    private static func inLanes(_ count: Int, lanes: Int, _ body: @escaping @Sendable (Int) async -> Void) async {
        let next = NIOLockedValueBox(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(lanes, count) {
                group.addTask {
                    while let i = next.withLockedValue({ v -> Int? in
                        guard v < count else { return nil }
                        v += 1
                        return v - 1
                    }) { await body(i) }
                }
            }
        }
    }
}
