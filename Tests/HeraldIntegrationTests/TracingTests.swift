import AMQP
import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
import HeraldStubs
@testable import HeraldWire
import Testing

/// Traces on the real executables (`herald-api`, `herald-sms`), exported over OTLP/HTTP to a
/// local receiver: one SMS verification's spans form one tree from the caller's request to the
/// provider's HTTP call; a job published without `traceparent` starts a trace of its own.
@Suite(.needsServers) struct TracingTests {
    static let kinds = OTLPReceiver.kinds

    static func tracing(_ receiver: OTLPReceiver) -> [String: String] {
        ["HERALD_TRACING_ENABLED": "true", "HERALD_TRACING_ENDPOINT": receiver.endpoint, "HERALD_TRACING_PROTOCOL": "http/json",
         "HERALD_TRACING_BATCH_DELAY_MS": "50", "HERALD_TRACING_HEADERS": "X-Collector-Token=test-token"]
    }

    /// `body` with a receiver, a Twilio stand-in and a ready herald-sms sending through it and
    /// exporting its spans to the receiver; all three stopped afterwards, also on a failure.
    static func withTracedWorker(_ harness: Harness, _ body: (OTLPReceiver, StubHTTPServer, WorkerProcess) async throws -> Void) async throws {
        let receiver = try await OTLPReceiver()
        let twilio = try await StubHTTPServer { _ in .init(status: 201, body: #"{"sid":"SM1","status":"queued"}"#) }
        do {
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace, environment: tracing(receiver).merging([
                "HERALD_SMS_PROVIDERS": "twilio", "HERALD_SMS_TWILIO_BASE_URL": twilio.baseURL, "HERALD_SMS_TWILIO_ACCOUNT_SID": "AC1",
                "HERALD_SMS_TWILIO_AUTH_TOKEN": "token", "HERALD_SMS_TWILIO_FROM": "+15005550006",
                // The requests through herald-api come from 127.0.0.1, counted with every other test's (SMSFixture).
                "HERALD_SMS_LIMITS_IP_MAX": "1000000",
            ]) { $1 })
            defer { worker.signal(SIGTERM) }
            try await worker.waitUntilReady()
            try await body(receiver, twilio, worker)
        } catch {
            await twilio.close()
            await receiver.close()
            throw error
        }
        await twilio.close()
        await receiver.close()
    }

    @Test func oneVerificationIsOneTreeFromTheRequestToTheProviderCall() async throws {
        try await withHarness { harness in try await Self.withTracedWorker(harness) { receiver, twilio, worker in
            let api = try await APIProcess(harness, environment: Self.tracing(receiver))
            // The caller's own span: everything Herald does for the request is under it.
            let traceID = RandomID.hex(), callerSpan = String(RandomID.hex().prefix(16))
            let phone = harness.phone(3), id = "\(harness.namespace)-traced"
            let started = try await api.call(.POST, "/v1/sms/verifications", json: ["verification_id": id, "phone_number": phone],
                                             headers: [("traceparent", "00-\(traceID)-\(callerSpan)-01")])
            #expect(started.status == 200, "\(started)")
            // A Verify path that holds the number, answered 404 through an error: its span keeps the route and the kind only.
            let unknown = try await api.call(.GET, "/v2/Services/VA00000000000000000000000000000000/Verifications/\(phone)")
            #expect(unknown.status == 404, "\(unknown)")
            try await eventually("the SMS sent and its spans exported") {
                // The process span ends last (after its ack), possibly in the exporter's next batch.
                receiver.spans.contains { $0.traceID == traceID && $0.name.hasPrefix("ack ") }
                    && receiver.spans.contains { $0.traceID == traceID && $0.name.hasPrefix("process ") }
                    && receiver.spans.contains { $0.traceID == traceID && $0.name == "POST /v1/sms/verifications" }
            }
            let spans = receiver.spans.filter { $0.traceID == traceID }
            func one(_ name: String, service: String) throws -> OTLPReceiver.Span {
                try #require(spans.first { $0.name == name && $0.service == service }, "no \(name) of \(service) in \(spans)")
            }
            let request = try one("POST /v1/sms/verifications", service: "herald-api")
            #expect(request.kind == Self.kinds.server && request.parentSpanID == callerSpan)
            #expect(request.attributes["http.route"] == "/v1/sms/verifications" && request.attributes["http.response.status_code"] == "200")
            let publish = try one("publish \(harness.namespace)", service: "herald-api")
            #expect(publish.kind == Self.kinds.producer && publish.parentSpanID == request.spanID)
            #expect(publish.attributes["messaging.system"] == "rabbitmq" && publish.attributes["messaging.rabbitmq.destination.routing_key"] == "sms.verification")
            let process = try one("process \(harness.namespace).sms", service: "herald-sms")
            #expect(process.kind == Self.kinds.consumer && process.parentSpanID == publish.spanID)
            #expect(process.links.contains { $0 == (traceID, publish.spanID) }, "process links to its creation context")
            #expect(process.attributes["messaging.operation.name"] == "process" && process.attributes["messaging.message.id"] == publish.attributes["messaging.message.id"])
            for name in ["decode", "claim", "handle sms.verification.v1", "commit", "ack \(harness.namespace).sms"] {
                #expect(try one(name, service: "herald-sms").parentSpanID == process.spanID, "\(name) is a child of process")
            }
            let handle = try one("handle sms.verification.v1", service: "herald-sms")
            let provider = try one("send sms twilio", service: "herald-sms")
            #expect(provider.parentSpanID == handle.spanID && provider.attributes["herald.provider.result"] == "accepted")
            let call = try one("POST", service: "herald-sms")
            #expect(call.kind == Self.kinds.client && call.parentSpanID == provider.spanID)
            #expect(call.attributes["http.response.status_code"] == "201" && call.attributes["server.address"] == "127.0.0.1")
            #expect(try one("ack \(harness.namespace).sms", service: "herald-sms").kind == Self.kinds.client)

            // Nothing of the message in a span: no number, no code, no URL, no credentials.
            let code = try #require(twilio.requests.first?.form["Body"].flatMap { SMSFixture.code(in: $0, length: 6) })
            try await eventually("the 404's span exported") { receiver.spans.contains { $0.attributes["http.response.status_code"] == "404" } }
            let values = receiver.spans.flatMap { $0.attributes.values + $0.otherTexts + [$0.name] }
            for secret in [phone, String(phone.dropFirst()), code, "token", twilio.baseURL] {
                #expect(!values.contains { $0.contains(secret) }, "'\(secret)' is in a span")
            }
            #expect(!values.contains { $0.contains("/Accounts/") }, "a URL path is in a span")
            // The provider gets no trace context (a third party); the collector gets its header.
            #expect(twilio.requests.allSatisfy { $0.header("traceparent") == nil })
            #expect(receiver.requests.allSatisfy { $0.header("X-Collector-Token") == "test-token" })
            // The worker's log lines of the job carry its trace id.
            #expect(worker.log.contains(#""trace_id":"\#(traceID)""#), "a log line of the job has its trace_id")
        } }
    }

    @Test func aJobWithoutTraceparentStartsItsOwnTrace() async throws {
        try await withHarness { harness in try await Self.withTracedWorker(harness) { receiver, _, _ in
            // The test process has no tracer: HeraldClient publishes no traceparent.
            // And one whose traceparent is garbage: a new trace too.
            let garbled = SMSVerificationJob(verificationID: "\(harness.namespace)-garbled", phoneNumber: harness.phone(5), locale: "en")
            let garbledID = "\(harness.namespace)-garbled"
            try await harness.client.publishRaw(
                body: Array(try JSONEncoder().encode(garbled)), routingKey: SMSVerificationJob.name,
                properties: JobEnvelope(messageID: garbledID, typeName: SMSVerificationJob.typeName).properties(headers: ["traceparent": .string("00-not-a-trace-01")]))
            let messageIDs = [try await harness.enqueue(harness.sms(4)), garbledID]
            try await eventually("both processed and exported") {
                let processed = receiver.spans.filter { $0.name == "process \(harness.namespace).sms" }
                return messageIDs.allSatisfy { id in processed.contains { $0.attributes["messaging.message.id"] == id } }
            }
            for id in messageIDs {
                let process = try #require(receiver.spans.first { $0.name == "process \(harness.namespace).sms" && $0.attributes["messaging.message.id"] == id })
                #expect(process.parentSpanID.isEmpty && process.links.isEmpty, "a root of its own trace: \(process)")
                #expect(receiver.spans.contains { $0.traceID == process.traceID && $0.name == "POST" }, "its provider call is in its trace")
            }
        } }
    }
}
