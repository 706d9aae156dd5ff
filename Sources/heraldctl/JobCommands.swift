import AMQP
import ArgumentParser
import Foundation
import HeraldCleanup
import HeraldClient
import HeraldEmail
import HeraldPhone
import HeraldPush
import HeraldRuntime
import HeraldWire
import HeraldWorkers

struct Enqueue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Publish one job (with publisher confirms).")
    @OptionGroup var options: GlobalOptions

    @Argument(help: "Job name: sms.verification, email.action, push.verification, cleanup.run, apple.token, apple.revoke or apple.notification.")
    var job: String

    @Option(help: "The job body as JSON.")
    var json: String

    @Option(help: "Idempotency key (default: a new UUID).")
    var messageID: String?

    @Option(help: "Correlation id carried into the worker's logs.")
    var correlationID: String?

    @Flag(help: "Publish even if the body does not validate (to test dead-lettering).")
    var noValidate = false

    func run() async throws {
        let context = try CLIContext.load(options)
        guard let type = HeraldFleet.workers.flatMap({ $0.jobTypes }).first(where: { $0.name == job }) else {
            throw CLIExit.fail("unknown job '\(job)'", code: .usage)
        }
        let body = Array(json.utf8)
        if !noValidate {
            do {
                _ = try validate(type, body)
            } catch let error as JobValidationError {
                throw CLIExit.fail("invalid \(job) job: \(error.reason)", code: .usage)
            }
        }
        let messageID = self.messageID ?? UUID().uuidString.lowercased()
        let properties = JobEnvelope(messageID: messageID, typeName: type.typeName, correlationID: correlationID).properties()
        if !noValidate {
            do {
                try JobEnvelope.checkMessageID(messageID)
            } catch {
                throw CLIExit.fail("invalid --message-id: \(error.reason)", code: .usage)
            }
        }
        let namespace = context.configuration.amqp.namespace
        do {
            try await context.withBroker { connection in
                try await HeraldClient(connection: connection, namespace: namespace).publishRaw(body: body, routingKey: type.name, properties: properties)
            }
        } catch let error as HeraldClientError {
            throw CLIExit.fail("\(error)")
        }
        if options.output == .json { printJSON(["message_id": messageID, "type": type.typeName]) } else { print(messageID) }
    }

    private func validate<J: HeraldJob>(_ type: J.Type, _ body: [UInt8]) throws -> J {
        try JobDecoder<J>(maxBytes: 16 << 20).payload(body)
    }
}

struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the dev outbox provider 'delivered'.")
    @OptionGroup var options: GlobalOptions
    @Option(help: "How many of the latest entries.") var limit = 20

    func run() async throws {
        let context = try CLIContext.load(options)
        let limit = self.limit
        let entries = try await context.withDatabase { try await DevOutbox.recent(limit: limit, client: $0, logger: context.logger) }
        if options.output == .json {
            printJSON(entries.map { ["kind": $0.kind, "message_id": $0.messageID, "type": $0.jobType, "recipient": $0.recipient, "body": $0.body] })
        } else {
            for entry in entries.reversed() { print("[\(entry.kind)] \(entry.jobType) → \(entry.recipient)  \(entry.body)") }
        }
    }
}

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Enqueue one job of each flow (used by make run).")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let context = try CLIContext.load(options)
        let namespace = context.configuration.amqp.namespace
        let run = String(UUID().uuidString.lowercased().prefix(8))
        // A number of its own each run, so re-entrancy and the per-number limit never hold the demo back.
        let phone = "+4915112\(Int.random(in: 100_000...999_999))"
        let ids = try await context.withBroker { connection in
            let client = HeraldClient(connection: connection, namespace: namespace)
            return [
                try await client.enqueue(SMSVerificationJob(verificationID: "demo-\(run)", phoneNumber: phone, locale: "de", purpose: .signIn)),
                try await client.enqueue(EmailActionJob(requestID: "demo-\(run)", email: "alice@example.com", mode: .signIn, locale: "en",
                                                        actionCodeSettings: .init(url: "http://localhost:8080/finish?cart=42", handleCodeInApp: true))),
                // A device token of its own each run, so the per-device push limit never holds the demo back.
                try await client.enqueue(PushVerificationJob(receipt: "demo-\(run)", deviceToken: (0..<32).map { _ in String(format: "%02x", Int.random(in: 0...255)) }.joined(),
                                                             platform: .apns, environment: .sandbox, appID: "com.example.app")),
                try await client.enqueue(CleanupRunJob(runID: "demo-\(run)", dryRun: true)),
            ]
        }
        for id in ids { print("enqueued \(id)") }
        // make run checks this verification's code, as a front API would.
        print("sms verification_id: demo-\(run)")
        print("sms phone_number: \(phone)")
        // ... and this receipt's push secret.
        print("push receipt: demo-\(run)")
        // …and this email link, followed and consumed.
        print("email request_id: demo-\(run)")
    }
}
