import AMQP
import Foundation
@testable import HeraldCleanup
import HeraldClient
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldPush
@testable import HeraldRuntime
import Logging
import PostgresNIO

/// `herald-sms` in-process on a test's namespace: its configuration, its dev outbox spool
/// (the stand-in phone, where the codes can be read), the events it emits, and the check API.
final class SMSFixture: Sendable {
    let harness: Harness
    let spool: String
    /// The channel's events, as a front API's consumer reads them.
    let events: EventTap

    init(_ harness: Harness) async throws {
        self.harness = harness
        spool = NSTemporaryDirectory() + "herald-sms-\(harness.namespace)"
        events = try await EventTap(harness, channel: "sms")
        harness.onClose { await self.close() }
    }

    func configuration(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) -> HeraldConfiguration {
        var configuration = harness.configuration
        configuration.outbox.directory = spool
        configuration.sms.resendIntervalSeconds = 30
        // The tests' requests through herald-api all come from 127.0.0.1, and per-IP counters are
        // shared by every test of the database (and every run of the hour): out of the way here;
        // a test of the IP limit sets its own.
        configuration.sms.ipLimit = .init(max: 1_000_000, windowSeconds: 3600)
        configure(&configuration)
        return configuration
    }

    func start(_ configure: (inout HeraldConfiguration) -> Void = { _ in }) async throws -> RunningWorker {
        let configuration = configuration(configure)
        let handler = try PhoneHandler(configuration: configuration)
        return try await harness.startRunner(.sms, handler) { $0 = configuration }
    }

    struct Delivered: Sendable {
        var to: String
        var text: String
        var verificationID: String
    }

    /// What the stand-in phone received, oldest first.
    func delivered() -> [Delivered] {
        guard let text = try? String(contentsOfFile: spool + "/sms.jsonl", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] else { return nil }
            return Delivered(to: object["to"] ?? "", text: object["text"] ?? "", verificationID: object["verification_id"] ?? "")
        }
    }

    /// The code in the latest SMS to `phone`.
    func code(to phone: String, length: Int = 6) -> String? {
        delivered().last { $0.to == phone }.flatMap { Self.code(in: $0.text, length: length) }
    }

    static func code(in text: String, length: Int) -> String? {
        var run = ""
        for character in text + " " {
            if character.isASCII, character.isNumber { run.append(character); continue }
            if run.count == length { return run }
            run = ""
        }
        return nil
    }

    func verify(_ verificationID: String, _ code: String) async throws -> PhoneVerifier.Result {
        let verification = try HeraldVerification(database: harness.database, secrets: harness.configuration.secrets)
        return try await verification.verifyPhone(verificationID: verificationID, code: code, logger: harness.logger)
    }


    struct Verification: Sendable {
        var state: String
        var reason: String?
        var provider: String?
        var providerMessageID: String?
        var uncertainSends: Int
    }

    func verification(_ id: String) async throws -> Verification? {
        let rows = try await harness.database.query("""
            SELECT state, reason, provider, provider_message_id, uncertain_sends FROM herald.sms_verifications WHERE verification_id = \(id)
            """, logger: harness.logger)
        for try await (state, reason, provider, message, uncertain) in rows.decode((String, String?, String?, String?, Int).self) {
            return Verification(state: state, reason: reason, provider: provider, providerMessageID: message, uncertainSends: uncertain)
        }
        return nil
    }

    /// Provider calls recorded for a verification, as `heraldctl verify show-sms` reads them.
    func attempts(_ id: String) async throws -> [DeliveryAttempt] {
        try await AttemptLog.sms.read(id, client: harness.database, logger: harness.logger)
    }

    func close() async {
        try? FileManager.default.removeItem(atPath: spool)
    }
}
