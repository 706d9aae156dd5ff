import Crypto
import Foundation
@testable import HeraldCleanup
@testable import HeraldEmail
@testable import HeraldPhone
@testable import HeraldPush
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// The SMS providers against local servers that speak their APIs (Twilio's Messages API, a
/// Standard Webhooks receiver) and against a real Kannel with its fake SMSC.
@Suite(.needsServers) struct SMSProviderTests {
    static let webhookSecret = "whsec_" + Data((0..<32).map { UInt8($0) }).base64EncodedString()

    static func twilio(_ configuration: inout HeraldConfiguration, _ server: StubHTTPServer) {
        configuration.sms.twilio.baseURL = server.baseURL
        configuration.sms.twilio.accountSID = "AC0123456789"
        configuration.sms.twilio.authToken = "twilio-token"
        configuration.sms.twilio.from = "+15005550006"
    }

    static func webhook(_ configuration: inout HeraldConfiguration, _ server: StubHTTPServer) {
        configuration.sms.webhook.url = server.baseURL + "/sms"
        configuration.sms.webhook.secret = webhookSecret
    }

    static func twilioCreated(_ request: StubHTTPServer.Request) -> StubHTTPServer.Response {
        .init(status: 201, body: #"{"sid":"SM\#(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())","status":"queued"}"#)
    }

    @Test func twilioAcceptsAndItsMessageIDIsRecorded() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let server = try await StubHTTPServer(responder: Self.twilioCreated)
            let worker = try await sms.start {
                Self.twilio(&$0, server)
                $0.sms.providers = [.twilio]
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-tw", phoneNumber: harness.phone(1), locale: "de")
            let id = try await harness.enqueue(job)
            try await eventually("sent") { try await harness.ledger(id)?.0 == "completed" }

            let request = try #require(server.requests.first)
            #expect(server.requestCount == 1)
            #expect(request.method == "POST")
            #expect(request.path == "/2010-04-01/Accounts/AC0123456789/Messages.json")
            #expect(request.header("Authorization") == "Basic " + Data("AC0123456789:twilio-token".utf8).base64EncodedString())
            #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.form["To"] == job.phoneNumber)
            #expect(request.form["From"] == "+15005550006")
            let body = try #require(request.form["Body"])
            #expect(body.contains("Bestätigungscode für Herald"))
            let code = try #require(SMSFixture.code(in: body, length: 6))
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))

            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.provider == "twilio")
            #expect(row.providerMessageID?.hasPrefix("SM") == true)
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.count == 1)
            #expect(attempts.first?.result == .accepted)
            #expect(attempts.first?.httpStatus == 201)
            let events = try await sms.events.take(atLeast: 1)
            #expect(events.first?.0 == "sms.sent")
            #expect(events.first?.1["provider_message_id"] as? String == row.providerMessageID)
            try await worker.stop()
        }
    }

    @Test func aTwilio4xxIsPermanentNoRetryNoFailover() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await StubHTTPServer { _ in
                .init(status: 400, body: #"{"code":21211,"message":"The 'To' number is not a valid phone number.","status":400}"#)
            }
            let hook = try await StubHTTPServer { _ in .init(status: 200, body: "{}") }
            let worker = try await sms.start {
                Self.twilio(&$0, twilio)
                Self.webhook(&$0, hook)
                $0.sms.providers = [.twilio, .webhook]
            }
            let job = harness.sms(2)
            let id = try await harness.enqueue(job)
            try await eventually("rejected") { try await harness.ledger(id)?.0 == "rejected" }
            try await Task.sleep(for: .milliseconds(300))
            #expect(twilio.requestCount == 1)
            #expect(hook.requestCount == 0)
            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.state == "failed")
            #expect(row.reason == "provider_rejected:twilio:twilio-21211")
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.map(\.result) == [.rejected])
            #expect(attempts.first?.errorCode == "twilio-21211")
            #expect(try await sms.events.take(atLeast: 1).map(\.0) == ["sms.failed"])
            // The code was closed: the next request for this number sends a fresh one at once.
            #expect(try await sms.verify(job.verificationID, "123456") == .notFound)
            try await worker.stop()
        }
    }

    @Test func a5xxAndATimeoutFailOverToTheNextProviderWhoseSignatureVerifies() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await StubHTTPServer { request in
                request.form["To"]?.hasSuffix("003") == true ? .init(status: 503, body: #"{"code":20500,"status":503}"#) : .hang()
            }
            let hook = try await StubHTTPServer { _ in .init(status: 202, body: #"{"message_id":"wh-\#(UUID().uuidString)"}"#) }
            let worker = try await sms.start {
                Self.twilio(&$0, twilio)
                Self.webhook(&$0, hook)
                $0.sms.providers = [.twilio, .webhook]
                // Room for the parallel suites' load: the stubs answer at once, the hanging one never.
                $0.sms.providerTimeoutMilliseconds = 2000
            }
            let unavailable = harness.sms(3)
            let hanging = harness.sms(4)
            let a = try await harness.enqueue(unavailable)
            let b = try await harness.enqueue(hanging)
            try await eventually("both sent") { try await harness.statuses([a, b]).values.filter { $0 == "completed" }.count == 2 }

            let first = try await sms.attempts(unavailable.verificationID)
            #expect(first.map(\.provider) == ["twilio", "webhook"])
            #expect(first.map(\.result) == [.transient, .accepted])
            #expect(first.first?.httpStatus == 503)
            let second = try await sms.attempts(hanging.verificationID)
            #expect(second.map(\.result) == [.timeout, .accepted])
            let viaHook = try await sms.verification(hanging.verificationID)
            #expect(viaHook?.provider == "webhook")
            #expect(viaHook?.providerMessageID?.hasPrefix("wh-") == true, "the webhook's message_id is recorded")

            // What the receiver gets is verifiable with the shared secret, as Standard Webhooks specify.
            #expect(hook.requestCount == 2)
            for request in hook.requests {
                let id = try #require(request.header("webhook-id"))
                #expect(id.hasPrefix("msg_") && id.count == 36 && id.dropFirst(4).allSatisfy(\.isHexDigit), "\(id)")
                let timestamp = try #require(request.header("webhook-timestamp"))
                let signature = try #require(request.header("webhook-signature"))
                let key = SymmetricKey(data: Data(base64Encoded: String(Self.webhookSecret.dropFirst(6)))!)
                let expected = Data(HMAC<SHA256>.authenticationCode(for: Data("\(id).\(timestamp).".utf8) + Data(request.body), using: key)).base64EncodedString()
                #expect(signature == "v1,\(expected)")
                #expect(abs((Int(timestamp) ?? 0) - Int(Date().timeIntervalSince1970)) < 60)
                let json = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
                #expect(json["type"] as? String == "sms.send")
                let data = try #require(json["data"] as? [String: Any])
                let to = try #require(data["to"] as? String)
                let code = try #require(SMSFixture.code(in: data["text"] as? String ?? "", length: 6))
                let job = to == unavailable.phoneNumber ? unavailable : hanging
                #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: to, purpose: .signIn))
            }
            try await worker.stop()
        }
    }

    /// A job from an Android app with an SMS Retriever hash: the text the provider gets carries
    /// the hash, then the WebOTP line, last; a job from another app gets no hash line.
    @Test func theProviderGetsTheAppsHashLineBeforeTheWebOTPLine() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let hook = try await StubHTTPServer { _ in .init(status: 200, body: "{}") }
            _ = try await sms.start {
                Self.webhook(&$0, hook)
                $0.sms.providers = [.webhook]
                $0.sms.webOTPOrigin = "login.example.com"
                $0.sms.androidAppHashes = ["com.example.app": "FA+9qCX9VSu"]
                $0.sms.maxSegments = 2
            }
            var android = harness.sms(5)
            android.client = .init(appID: "com.example.app")
            var other = harness.sms(6)
            other.client = .init(appID: "com.example.other")
            let ids = [try await harness.enqueue(android), try await harness.enqueue(other)]
            try await eventually("both sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }
            var texts: [String: String] = [:]
            for request in hook.requests {
                let data = try #require((try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["data"] as? [String: Any])
                texts[data["to"] as? String ?? ""] = data["text"] as? String
            }
            let withHash = try #require(texts[android.phoneNumber])
            let code = try #require(SMSFixture.code(in: withHash, length: 6))
            #expect(withHash.hasSuffix("\n\nFA+9qCX9VSu\n\n@login.example.com #\(code)"), "\(withHash)")
            let without = try #require(texts[other.phoneNumber])
            #expect(!without.contains("FA+9qCX9VSu") && without.contains("\n\n@login.example.com #"), "\(without)")
            await hook.close()
        }
    }

    /// A number in a region with a registration (India's DLT): each provider gets what it takes:
    /// Twilio the registered sender as `From`, Kannel the sender and the ids as SMPP TLVs in
    /// `meta-data`, the webhook `data.registration`. A number elsewhere gets none of it.
    @Test func aRegionsRegistrationGoesWithItsSMSToEachProvider() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await StubHTTPServer { _ in .init(status: 503, body: #"{"code":20500,"status":503}"#) }
            let kannel = try await StubHTTPServer { _ in .init(status: 503, body: "Service unavailable", contentType: "text/plain") }
            let hook = try await StubHTTPServer { _ in .init(status: 200, body: "{}") }
            _ = try await sms.start {
                Self.twilio(&$0, twilio)
                Self.webhook(&$0, hook)
                $0.sms.kannel.url = kannel.baseURL + "/cgi-bin/sendsms"
                $0.sms.kannel.from = "Herald"
                $0.sms.providers = [.twilio, .kannel, .webhook]
                $0.sms.registrations = ["IN": .init(sender: "HRALDX", entityID: "1101456789012345678",
                                                    templates: ["sign_in": "1107000000000000001", "en/sign_in": "1107000000000000002",
                                                                "mfa_enroll": "1107000000000000003", "mfa_enroll_short": "1107000000000000004",
                                                                "mfa_sign_in": "1107000000000000005"])]
            }
            let india = SMSVerificationJob(verificationID: "\(harness.namespace)-in", phoneNumber: "+9198" + harness.phonePrefix.suffix(6) + "01", locale: "en")
            let germany = harness.sms(7)
            let ids = [try await harness.enqueue(india), try await harness.enqueue(germany)]
            try await eventually("both sent") { try await harness.statuses(ids).values.filter { $0 == "completed" }.count == 2 }

            let toTwilio = try #require(twilio.requests.first { $0.form["To"] == india.phoneNumber })
            #expect(toTwilio.form["From"] == "HRALDX")
            #expect(twilio.requests.first { $0.form["To"] == germany.phoneNumber }?.form["From"] == "+15005550006")
            let toKannel = try #require(kannel.requests.first { $0.query["to"] == india.phoneNumber })
            #expect(toKannel.query["from"] == "HRALDX")
            #expect(toKannel.query["meta-data"] == "?smpp?PE_ID=1101456789012345678&TEMPLATE_ID=1107000000000000002", "\(toKannel.uri)")
            #expect(kannel.requests.first { $0.query["to"] == germany.phoneNumber }.map { $0.query["meta-data"] == nil && $0.query["from"] == "Herald" } == true)
            var registrations: [String: [String: String]] = [:]
            for request in hook.requests {
                let data = try #require((try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])?["data"] as? [String: Any])
                registrations[data["to"] as? String ?? ""] = data["registration"] as? [String: String] ?? [:]
            }
            #expect(registrations[india.phoneNumber] == ["sender": "HRALDX", "entity_id": "1101456789012345678", "template_id": "1107000000000000002"])
            #expect(registrations[germany.phoneNumber] == [:])
            for server in [twilio, kannel, hook] { await server.close() }
        }
    }

    @Test func whenEveryProviderFailsTheJobIsRetriedWithAFreshCodeAndNoUncertainSend() async throws {
        // A second's delay and room for tries: with the default 100, 200 and 400 ms and three tries, a
        // loaded machine could see the row in its next try (`sending`) or out of tries before the stub mends.
        try await withHarness(retryDelays: [1_000], maxAttempts: 20) { harness in
            let sms = try await SMSFixture(harness)
            let twilio = try await StubHTTPServer { _ in .init(status: 500, body: "{}") }
            let worker = try await sms.start {
                Self.twilio(&$0, twilio)
                $0.sms.providers = [.twilio]
            }
            let job = harness.sms(5)
            let id = try await harness.enqueue(job)
            // Both read between two tries: once the next try has begun, the job is running and the row `sending`.
            try await eventually("the job and its row retrying") {
                let ledger = try await harness.ledger(id)?.0
                let row = try await sms.verification(job.verificationID)?.state
                return ledger == "retrying" && row == "retrying"
            }
            twilio.respond(with: Self.twilioCreated)
            try await eventually("sent on a later try") { try await harness.ledger(id)?.0 == "completed" }
            let row = try #require(try await sms.verification(job.verificationID))
            #expect(row.state == "sent")
            #expect(row.uncertainSends == 0)
            let bodies = twilio.requests.compactMap { $0.form["Body"] }
            #expect(bodies.count >= 2)
            // Only the last code sent works.
            let last = try #require(SMSFixture.code(in: bodies.last!, length: 6))
            #expect(try await sms.verify(job.verificationID, last) == .verified(phoneNumber: job.phoneNumber, purpose: .signIn))
            try await worker.stop()
        }
    }

    @Test func kannelDeliversTheRenderedTextToItsSMSC() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let env = ProcessInfo.processInfo.environment
            let smscLog = env["HERALD_DEV_KANNEL_SMSC_LOG"] ?? TestEnvironment.root.appendingPathComponent(".run/kannel/fakesmsc.out").path
            let worker = try await sms.start {
                $0.sms.providers = [.kannel]
                $0.sms.kannel.url = env["HERALD_DEV_KANNEL_URL"] ?? "http://127.0.0.1:55682/cgi-bin/sendsms"
                $0.sms.kannel.username = "herald"
                $0.sms.kannel.password = "herald-dev"
                $0.sms.kannel.from = "Herald"
                $0.sms.appName = "Kannel Test"
            }
            let job = SMSVerificationJob(verificationID: "\(harness.namespace)-k", phoneNumber: harness.phone(6), locale: "en-GB", purpose: .mfaSignIn)
            let id = try await harness.enqueue(job)
            try await eventually("accepted by Kannel") { try await harness.ledger(id)?.0 == "completed" }
            #expect(try await sms.attempts(job.verificationID).first?.httpStatus == 202)
            // fakesmsc prints each message it gets: "Got message N: <from to text …>".
            var line = ""
            try await eventually("at the SMSC") {
                let log = (try? String(contentsOfFile: smscLog, encoding: .utf8)) ?? ""
                line = log.split(separator: "\n").last { $0.contains(job.phoneNumber) }.map(String.init) ?? ""
                return !line.isEmpty
            }
            #expect(line.contains("<Herald \(job.phoneNumber) text "))
            #expect(line.contains("is your Kannel Test sign-in code. Don't share it with anyone."))
            let code = try #require(SMSFixture.code(in: line, length: 6))
            #expect(try await sms.verify(job.verificationID, code) == .verified(phoneNumber: job.phoneNumber, purpose: .mfaSignIn))
            try await worker.stop()
        }
    }

    @Test func kannelRefusingOurCredentialsIsTransientAndEndsInTheDeadLetterQueue() async throws {
        try await withHarness() { harness in
            let sms = try await SMSFixture(harness)
            let worker = try await sms.start {
                $0.sms.providers = [.kannel]
                $0.sms.kannel.url = ProcessInfo.processInfo.environment["HERALD_DEV_KANNEL_URL"] ?? "http://127.0.0.1:55682/cgi-bin/sendsms"
                $0.sms.kannel.username = "herald"
                $0.sms.kannel.password = "wrong"
            }
            let job = harness.sms(7)
            let id = try await harness.enqueue(job)
            try await eventually("dead after its tries") { try await harness.ledger(id)?.0 == "dead" }
            let attempts = try await sms.attempts(job.verificationID)
            #expect(attempts.count == 3)
            #expect(attempts.allSatisfy { $0.result == .transient && $0.httpStatus == 403 })
            #expect(try await harness.drainDeadLetters(.sms).count == 1)
            try await worker.stop()
        }
    }
}
