import Crypto
import Foundation
@testable import HeraldPhone
@testable import HeraldPhoneCheck
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import NIOHTTP1
import Testing

/// Delivery receipts end to end: the real herald-api takes each provider's callbacks (Twilio's
/// status callbacks from the Twilio stand-in, DLRs from the real Kannel, the webhook provider's
/// receipts), herald-sms in-process applies them to its send attempts.
@Suite(.needsServers) struct SMSReceiptTests {
    static let twilioToken = "receipt-test-token"
    static let kannelSecret = String(repeating: "k7", count: 20)
    static let kannelURL = ProcessInfo.processInfo.environment["HERALD_DEV_KANNEL_URL"] ?? "http://127.0.0.1:55682/cgi-bin/sendsms"

    /// herald-api on a port known beforehand, taking the receipts of every provider.
    static func api(_ harness: Harness, extra: [String: String] = [:]) async throws -> APIProcess {
        let port = try WorkerProcess.freePort()
        return try await APIProcess(harness, port: port, environment: [
            "HERALD_SMS_RECEIPTS_BASE_URL": "http://127.0.0.1:\(port)", "HERALD_SMS_TWILIO_AUTH_TOKEN": twilioToken,
            "HERALD_SMS_WEBHOOK_SECRET": SMSProviderTests.webhookSecret, "HERALD_SMS_RECEIPTS_KANNEL_SECRET": kannelSecret,
        ].merging(extra) { $1 })
    }

    /// herald-sms's receipts settings for `api`.
    static func receipts(_ configuration: inout HeraldConfiguration, _ api: APIProcess) {
        configuration.sms.receipts.baseURL = "http://127.0.0.1:\(api.port)"
        configuration.sms.receipts.kannelSecret = kannelSecret
    }

    /// herald-sms sending through the Twilio stand-in, its receipts to `api`.
    static func twilio(_ configuration: inout HeraldConfiguration, _ twilio: TwilioStubServer, _ api: APIProcess) {
        receipts(&configuration, api)
        configuration.sms.providers = [.twilio]
        configuration.sms.twilio.baseURL = twilio.baseURL
        configuration.sms.twilio.accountSID = twilio.accountSID
        configuration.sms.twilio.authToken = twilioToken
        configuration.sms.twilio.from = "+15005550006"
    }

    /// A webhook receipt as the provider signs it.
    static func webhookReceipt(_ api: APIProcess, messageID: String, status: String, errorCode: String? = nil,
                               id: String = "msg_" + UUID().uuidString, at timestamp: Int = Int(Date().timeIntervalSince1970)) async throws -> APIProcess.Answer {
        var data: [String: Any] = ["message_id": messageID, "status": status]
        data["error_code"] = errorCode
        let body = try JSONSerialization.data(withJSONObject: ["type": "sms.status", "data": data])
        let key = try #require(StandardWebhooks.key(secret: SMSProviderTests.webhookSecret))
        return try await api.call(.POST, "/v1/receipts/webhook", body: String(decoding: body, as: UTF8.self), auth: Auth.none, headers: [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", StandardWebhooks.signature(id: id, timestamp: timestamp, body: Array(body), key: key)),
        ])
    }

    typealias Auth = APIProcess.Auth

    /// Twilio reports sent, then delivered: the attempt ends `delivered`, `sms.delivered` goes out,
    /// and the API's read (what show-sms prints) shows it.
    @Test func twilioStatusCallbacksReachTheSendAttempt() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await TwilioStubServer(authToken: Self.twilioToken)
            let api = try await Self.api(harness)
            _ = try await sms.start { Self.twilio(&$0, twilio, api) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-tw", phoneNumber: harness.phone(1))
            _ = try await harness.enqueue(job)
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }
            // herald-sms can apply the receipt before the stand-in has read herald-api's answer to it.
            try await eventually("both callbacks answered") { twilio.posted.count == 2 }

            let message = try #require(twilio.messages.first)
            #expect(message.statusCallback == "http://127.0.0.1:\(api.port)/v1/receipts/twilio")
            #expect(twilio.posted.map(\.status) == ["sent", "delivered"] && twilio.posted.allSatisfy { $0.answer == 204 }, "\(twilio.posted)")
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            #expect(attempt.providerMessageID == message.sid && attempt.delivery?.errorCode == nil)
            let events = try await sms.events.take(atLeast: 2)
            let delivered = try #require(events.first { $0.0 == "sms.delivered" })
            #expect(delivered.1["verification_id"] as? String == job.verificationID && delivered.1["provider_message_id"] as? String == message.sid)
            #expect(delivered.1["region"] as? String == "DE" && delivered.1["phone"] as? String != job.phoneNumber)

            let shown = try await api.call(.GET, "/v1/sms/verifications/\(job.verificationID)")
            let calls = try #require(shown.json["provider_calls"] as? [[String: Any]])
            #expect(calls.first?["delivery_status"] as? String == "delivered" && calls.first?["delivery_status_at"] is String, "\(shown)")
            // Twilio sends a callback again: the same job, which the ledger has finished: no event.
            let fields = [("AccountSid", twilio.accountSID), ("MessageSid", message.sid), ("MessageStatus", "delivered")]
            let again = try await api.call(.POST, "/v1/receipts/twilio", body: fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
                                           contentType: "application/x-www-form-urlencoded", auth: Auth.none, headers: [
                                               ("X-Twilio-Signature", TwilioStubServer.signature(url: message.statusCallback ?? "", fields: fields, authToken: Self.twilioToken)),
                                           ])
            #expect(again.status == 204, "\(again)")
            try await eventually("the repeat consumed") { try await harness.depth(harness.topology.workQueue(.sms)) == 0 }
            try await Task.sleep(for: .milliseconds(500))
            let repeated = SMSReceiptJob(provider: .twilio, providerMessageID: message.sid, status: .delivered)
            #expect(try await harness.ledger(repeated.messageID)?.1 == 1, "the repeat was not run again")
            #expect(try await sms.events.take().filter { $0.0 == "sms.delivered" }.isEmpty)
            await twilio.close()
        }
    }

    /// Undelivered (Twilio's 30003), then a `sent` that comes late: the final status stays, with
    /// its error code, and `sms.undelivered` goes out once.
    @Test func aLateSentNeverUndoesAFinalStatus() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await TwilioStubServer(authToken: Self.twilioToken)
            // Each callback well after the one before (and the send's commit): the late `sent` meets a final status.
            twilio.script([.init("undelivered", errorCode: "30003", after: .milliseconds(400)), .init("sent", after: .milliseconds(400))])
            let api = try await Self.api(harness)
            _ = try await sms.start { Self.twilio(&$0, twilio, api) }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-late", phoneNumber: harness.phone(2))
            _ = try await harness.enqueue(job)
            try await eventually("both callbacks answered") { twilio.posted.count == 2 }
            let sid = try #require(twilio.messages.first?.sid)
            let late = SMSReceiptJob(provider: .twilio, providerMessageID: sid, status: .sent)
            try await eventually("the late sent handled") { try await harness.ledger(late.messageID)?.0 == "completed" }
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            #expect(attempt.delivery?.status == .undelivered && attempt.delivery?.errorCode == "twilio-30003", "\(attempt)")
            let events = try await sms.events.take(atLeast: 2)
            #expect(events.filter { $0.0 == "sms.undelivered" }.count == 1 && !events.contains { $0.0 == "sms.delivered" })
            #expect(events.first { $0.0 == "sms.undelivered" }?.1["error_code"] as? String == "twilio-30003")
            await twilio.close()
        }
    }

    /// The order rule in the database, receipt by receipt in a set order, on an attempt a real
    /// send recorded: a later status moves it on, a lower one or a second final one is stale, the
    /// same one a duplicate (from its own job or another), an unknown id or an attempt older than
    /// the days searched is unknown.
    @Test func theOrderRuleReceiptByReceipt() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let messageID = "wh-order-" + harness.namespace
            let hook = try await StubHTTPServer { _ in .init(status: 200, body: #"{"message_id":"\#(messageID)"}"#) }
            _ = try await sms.start {
                SMSProviderTests.webhook(&$0, hook)
                $0.sms.providers = [.webhook]
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-order", phoneNumber: harness.phone(5))
            _ = try await harness.enqueue(job)
            try await eventually("sent") { try await sms.attempts(job.verificationID).first?.providerMessageID == messageID }

            func apply(_ status: DeliveryStatus, _ jobID: String, id: String = messageID, error: String? = nil,
                       receivedAt: Date = Date(), maxAge: Duration = .seconds(3600)) async throws -> PhoneStore.ReceiptResult {
                let receipt = SMSReceiptJob(provider: .webhook, providerMessageID: id, status: status, errorCode: error, receivedAt: receivedAt)
                return try await PhoneStore.applyReceipt(receipt, jobID: jobID, maxAge: maxAge, client: harness.database, logger: harness.logger)
            }
            let steps: [(DeliveryStatus, String, String?, PhoneStore.ReceiptResult.Kind, DeliveryStatus, Bool)] = [
                (.sent, "j1", nil, .applied, .sent, true),
                (.queued, "j2", nil, .stale, .sent, false),
                (.sent, "j3", nil, .duplicate, .sent, false),
                (.undelivered, "j4", "e-31", .applied, .undelivered, true),
                (.delivered, "j5", nil, .stale, .undelivered, false),
                (.undelivered, "j6", "e-32", .duplicate, .undelivered, false),
                (.undelivered, "j4", "e-31", .duplicate, .undelivered, true),
            ]
            for (status, jobID, error, kind, after, same) in steps {
                let result = try await apply(status, jobID, error: error)
                #expect(result.kind == kind && result.status == after && result.sameJob == same, "\(status) by \(jobID): \(result)")
                #expect(result.verificationID == job.verificationID && result.phone == job.phoneNumber)
            }
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            #expect(attempt.delivery?.status == .undelivered && attempt.delivery?.errorCode == "e-31")
            #expect(try await apply(.delivered, "j7", id: "wh-never").kind == .unknown)
            // Searched only back to maxAge before the receipt came: an attempt older is not found.
            #expect(try await apply(.delivered, "j8", receivedAt: Date().addingTimeInterval(7200), maxAge: .seconds(60)).kind == .unknown)
            await hook.close()
        }
    }

    /// The real Kannel with its fake SMSC: it reports type 8 (the SMSC took it), then type 1
    /// (delivered) to the signed dlr-url herald-sms gave it.
    @Test func kannelsDeliveryReportsReachTheSendAttempt() async throws {
        try await withHarness { harness in
            let sms = try await SMSFixture(harness)
            let api = try await Self.api(harness)
            _ = try await sms.start {
                Self.receipts(&$0, api)
                $0.sms.providers = [.kannel]
                $0.sms.kannel.url = Self.kannelURL
                $0.sms.kannel.username = "herald"
                $0.sms.kannel.password = "herald-dev"
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-kn", phoneNumber: harness.phone(3))
            _ = try await harness.enqueue(job)
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }
            let attempt = try #require(try await sms.attempts(job.verificationID).first)
            let id = try #require(attempt.providerMessageID)
            #expect(id.hasPrefix("hk-"))
            // Both of Kannel's reports were taken: the SMSC's acceptance (sent) too.
            let sent = SMSReceiptJob(provider: .kannel, providerMessageID: id, status: .sent)
            try await eventually("the SMSC's report handled") { try await harness.ledger(sent.messageID)?.0 == "completed" }
            #expect(try await sms.events.first("sms.delivered") != nil)
        }
    }

    /// A receipt that comes while the provider's answer is still on its way (so before the send's
    /// commit) waits in the delay queues and is applied; a receipt for a message nobody sent is
    /// dropped after the job's last attempt.
    @Test func aReceiptBeforeTheSendIsHeldAndOneForNoMessageIsDropped() async throws {
        try await withReceiptHarness { harness in
            let sms = try await SMSFixture(harness)
            let api = try await Self.api(harness)
            let early = EarlyReceipts(api: api)
            let hook = try await StubHTTPServer { request in
                let messageID = "wh-" + UUID().uuidString.lowercased()
                early.send(messageID)
                return .init(status: 200, body: #"{"message_id":"\#(messageID)"}"#, delay: .milliseconds(700))
            }
            _ = try await sms.start {
                Self.receipts(&$0, api)
                SMSProviderTests.webhook(&$0, hook)
                $0.sms.providers = [.webhook]
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-early", phoneNumber: harness.phone(4))
            _ = try await harness.enqueue(job)
            try await eventually("delivered") { try await sms.attempts(job.verificationID).first?.delivery?.status == .delivered }
            #expect(early.answers == [204])
            let messageID = try #require(try await sms.attempts(job.verificationID).first?.providerMessageID)
            // The status is applied before the job's outcome commits: the ledger follows it.
            let receiptJob = SMSReceiptJob(provider: .webhook, providerMessageID: messageID, status: .delivered).messageID
            try await eventually("the receipt's job completed") { try await harness.ledger(receiptJob)?.0 == "completed" }
            let ledger = try #require(try await harness.ledger(receiptJob))
            #expect(ledger.1 > 1, "the receipt came before the send's commit: \(ledger)")

            let nowhere = try await Self.webhookReceipt(api, messageID: "wh-never-sent", status: "delivered")
            #expect(nowhere.status == 204, "\(nowhere)")
            let dropped = SMSReceiptJob(provider: .webhook, providerMessageID: "wh-never-sent", status: .delivered)
            try await eventually(timeout: .seconds(30), "dropped after its attempts") { try await harness.ledger(dropped.messageID)?.0 == "completed" }
            #expect(try await harness.ledger(dropped.messageID)?.1 == 5)
            await hook.close()
        }
    }

    /// Forged, unsigned and stale callbacks (a webhook's replayed past its 5 minutes) are 401 and
    /// publish nothing; one sent twice is one job; a provider with no key configured has no
    /// endpoint (404); a source past its rate is 429; Kannel's reports from elsewhere than its
    /// listed addresses are 401.
    @Test func forgedCallbacksAreRefusedAndDuplicatesHandledOnce() async throws {
        try await withHarness { harness in
            let api = try await Self.api(harness, extra: ["HERALD_API_RECEIPTS_RATE_PER_SECOND": "1", "HERALD_API_RECEIPTS_RATE_BURST": "12"])
            let url = "http://127.0.0.1:\(api.port)/v1/receipts/twilio"
            let fields = [("MessageSid", "SMforged"), ("MessageStatus", "delivered"), ("AccountSid", "AC1")]
            let body = fields.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            let form = "application/x-www-form-urlencoded"
            let good = TwilioStubServer.signature(url: url, fields: fields, authToken: Self.twilioToken)
            let wrong = TwilioStubServer.signature(url: url, fields: fields, authToken: "not-the-token")
            let tampered = try await api.call(.POST, "/v1/receipts/twilio", body: body.replacingOccurrences(of: "delivered", with: "undelivered"),
                                              contentType: form, auth: Auth.none, headers: [("X-Twilio-Signature", good)])
            #expect(tampered.status == 401 && tampered.error["code"] as? String == "bad_signature", "\(tampered)")
            let forged = try await api.call(.POST, "/v1/receipts/twilio", body: body, contentType: form, auth: Auth.none, headers: [("X-Twilio-Signature", wrong)])
            #expect(forged.status == 401, "\(forged)")
            let unsigned = try await api.call(.POST, "/v1/receipts/twilio", body: body, contentType: form, auth: Auth.none)
            #expect(unsigned.status == 401, "\(unsigned)")
            let signed = try await api.call(.POST, "/v1/receipts/twilio", body: body, contentType: form, auth: Auth.none, headers: [("X-Twilio-Signature", good)])
            #expect(signed.status == 204, "\(signed)")

            let exp = Int(Date().timeIntervalSince1970) + 3600
            let kannel = try await api.call(.GET, "/v1/receipts/kannel?id=hk-1&exp=\(exp)&sig=AAAA&type=1", auth: Auth.none)
            #expect(kannel.status == 401, "\(kannel)")
            let sig = SMSConfiguration.Receipts.kannelSignature(id: "hk-1", expires: exp, secret: Self.kannelSecret)
            let dlr = "/v1/receipts/kannel?id=hk-1&exp=\(exp)&sig=\(sig)"
            let kannelGood = try await api.call(.GET, dlr + "&type=8&ts=1795806119&reply=ACK%2F", auth: Auth.none)
            #expect(kannelGood.status == 204, "\(kannelGood)")
            // A type Herald does not read: taken, nothing published.
            let kannelOther = try await api.call(.GET, dlr + "&type=32", auth: Auth.none)
            #expect(kannelOther.status == 204, "\(kannelOther)")

            let stale = try await Self.webhookReceipt(api, messageID: "m-1", status: "sent", at: Int(Date().timeIntervalSince1970) - 600)
            #expect(stale.status == 401, "\(stale)")
            let first = try await Self.webhookReceipt(api, messageID: "m-1", status: "sent")
            let again = try await Self.webhookReceipt(api, messageID: "m-1", status: "sent")
            #expect(first.status == 204 && again.status == 204)
            let invalid = try await Self.webhookReceipt(api, messageID: "m-1", status: "read")
            #expect(invalid.status == 400 && invalid.error["field"] as? String == "data.status", "\(invalid)")

            // Published: the signed Twilio callback, the signed DLR and the webhook receipt twice
            // (one job id: the worker's ledger handles it once), nothing forged or ignored.
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 4)
            // 5 signed callbacks so far of a burst of 12, 1 more a second: a few more are over the rate.
            var answers: [APIProcess.Answer] = []
            for n in 0..<12 { answers.append(try await Self.webhookReceipt(api, messageID: "m-\(n + 2)", status: "sent")) }
            let over = try #require(answers.first { $0.status == 429 }, "\(answers)")
            #expect(over.headers.first(name: "Retry-After") != nil && over.error["code"] as? String == "rate_limited", "\(over)")

            let bare = try await APIProcess(harness)
            let none = try await bare.call(.GET, dlr + "&type=1", auth: Auth.none)
            #expect(none.status == 404, "\(none)")
            // Kannel's reports from its own addresses only, when they are listed.
            let fenced = try await Self.api(harness, extra: ["HERALD_SMS_RECEIPTS_KANNEL_ALLOWED_SOURCES": "10.0.0.0/8"])
            let outside = try await fenced.call(.GET, dlr + "&type=1", auth: Auth.none)
            #expect(outside.status == 401, "\(outside)")
            // None listed: this host only. Behind a trusted proxy, another host's rewritten type is
            // refused (issue 46); the listed host's is taken.
            let proxied = try await Self.api(harness, extra: ["HERALD_API_TRUSTED_PROXIES": "127.0.0.1"])
            let rewritten = try await proxied.call(.GET, dlr + "&type=16", auth: Auth.none, headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(rewritten.status == 401, "\(rewritten)")
            let listed = try await Self.api(harness, extra: ["HERALD_API_TRUSTED_PROXIES": "127.0.0.1",
                                                             "HERALD_SMS_RECEIPTS_KANNEL_ALLOWED_SOURCES": "203.0.113.0/24"])
            let fromKannel = try await listed.call(.GET, dlr + "&type=16", auth: Auth.none, headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(fromKannel.status == 204, "\(fromKannel)")
        }
    }
}

/// What the webhook stand-in does before it answers a send: posts that message's `delivered`
/// receipt, signed, and keeps herald-api's answer.
final class EarlyReceipts: Sendable {
    let api: APIProcess
    private let state = NSLockedAnswers()

    init(api: APIProcess) { self.api = api }

    func send(_ messageID: String) {
        let (api, state) = (api, state)
        Task {
            let answer = try? await SMSReceiptTests.webhookReceipt(api, messageID: messageID, status: "delivered")
            state.append(answer?.status ?? 0)
        }
    }

    var answers: [Int] { state.all }
}

final class NSLockedAnswers: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []
    func append(_ value: Int) { lock.withLock { values.append(value) } }
    var all: [Int] { lock.withLock { values } }
}
