import Foundation
import PostgresNIO
import Synchronization
import Testing
@testable import HeraldRuntime

/// The delivery pipeline every channel shares, with fake providers: failover order, refusals,
/// uncertain sends and the attempt records.
@Suite struct ProviderChainTests {
    /// Answers from a script, and counts its calls.
    final class ScriptedProvider: DeliveryProvider, Sendable {
        let name: String
        let answer: ProviderAnswer<String>
        private let calls = Mutex(0)

        init(_ name: String, _ answer: ProviderAnswer<String>) {
            self.name = name
            self.answer = answer
        }

        var callCount: Int { calls.withLock { $0 } }

        func send(_ message: String, context: DeliveryContext) async -> ProviderAnswer<String> {
            calls.withLock { $0 += 1 }
            return answer
        }
    }

    /// Never connected: the fakes take no database.
    static let context = DeliveryContext(
        logger: .init(label: "test.chain"),
        database: PostgresClient(configuration: .init(host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable)))

    static func chain(_ providers: ScriptedProvider...) -> ProviderChain<String, String> {
        ProviderChain(channel: "test", providers: providers)
    }

    @Test func theFirstProviderThatAcceptsEndsTheChain() async {
        let (a, b, c) = (ScriptedProvider("a", .next("http-503", httpStatus: 503)), ScriptedProvider("b", .accepted("id-b", httpStatus: 201)),
                         ScriptedProvider("c", .accepted("id-c")))
        let delivery = await Self.chain(a, b, c).send("message", context: Self.context)
        #expect(delivery.outcome == .accepted)
        #expect(delivery.provider == "b")
        #expect(delivery.providerMessageID == "id-b")
        #expect(!delivery.uncertain)
        #expect(a.callCount == 1 && b.callCount == 1 && c.callCount == 0)
        #expect(delivery.attempts.map(\.provider) == ["a", "b"])
        #expect(delivery.attempts[0].result == .transient)
        #expect(delivery.attempts[0].errorCode == "http-503")
        #expect(delivery.attempts[0].httpStatus == 503)
        #expect(delivery.attempts[1] == DeliveryAttempt(provider: "b", result: .accepted, httpStatus: 201, providerMessageID: "id-b",
                                                         durationMilliseconds: delivery.attempts[1].durationMilliseconds))
    }

    /// A send cancelled (the runner's drain timeout) tries no further provider: the job is
    /// requeued instead of going round every provider while its worker stops.
    @Test func aCancelledSendCallsNoFurtherProvider() async {
        let (a, b) = (ScriptedProvider("a", .next("cancelled")), ScriptedProvider("b", .accepted("id-b")))
        let chain = Self.chain(a, b)
        let send = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await chain.send("message", context: Self.context)
        }
        let delivery = await send.value
        #expect(delivery.outcome == .failed(reason: "every provider failed (cancelled before a)"))
        #expect(a.callCount == 0 && b.callCount == 0)
    }

    @Test func aRefusalIsFinalAndNoOtherProviderIsTried() async {
        let (a, b) = (ScriptedProvider("a", .refused("21211", httpStatus: 400, detail: "bad number")), ScriptedProvider("b", .accepted(nil)))
        let delivery = await Self.chain(a, b).send("message", context: Self.context)
        #expect(delivery.outcome == .refused(reason: "a:21211"))
        #expect(delivery.answer?.detail == "bad number")
        #expect(b.callCount == 0)
        #expect(delivery.attempts.map(\.result) == [.rejected])
        #expect(delivery.attempts[0].errorCode == "21211")
    }

    @Test func whenEveryProviderFailsTheReasonNamesEachAndATimeoutMakesTheSendUncertain() async {
        let (a, b) = (ScriptedProvider("a", .timeout), ScriptedProvider("b", .next("unreachable")))
        let delivery = await Self.chain(a, b).send("message", context: Self.context)
        #expect(delivery.outcome == .failed(reason: "every provider failed (a: timeout; b: unreachable)"))
        #expect(delivery.answer == nil)
        #expect(delivery.provider == nil)
        #expect(delivery.uncertain)
        #expect(delivery.attempts.map(\.result) == [.timeout, .transient])
        #expect(delivery.attempts.map(\.uncertain) == [true, false])
    }

    @Test func anAcceptanceAfterATimeoutIsStillAnUncertainSend() async {
        // The first provider may have delivered before the second did: two messages, counted.
        let delivery = await Self.chain(ScriptedProvider("a", .timeout), ScriptedProvider("b", .accepted("x"))).send("m", context: Self.context)
        #expect(delivery.outcome == .accepted)
        #expect(delivery.uncertain)
    }

    @Test func httpStatusesMapToDispositions() {
        #expect(ProviderHTTP.classify(status: 201, code: nil) == nil)
        #expect(ProviderHTTP.classify(status: 302, code: nil) == .next(code: "http-302-redirect"))
        #expect(ProviderHTTP.classify(status: 401, code: nil) == .next(code: "http-401-credentials"))
        #expect(ProviderHTTP.classify(status: 429, code: "x") == .next(code: "x"))
        #expect(ProviderHTTP.classify(status: 503, code: nil) == .next(code: "http-503"))
        #expect(ProviderHTTP.classify(status: 400, code: "twilio-21211") == .refused(code: "twilio-21211"))
    }

    @Test func formValuesArePercentEncodedByteByByte() {
        // application/x-www-form-urlencoded: unreserved bytes stay, a space is "+", every other
        // byte of the UTF-8 is %XX in upper-case hex.
        #expect(PercentEncoding.form.encode("Az09-._*") == "Az09-._*")
        #expect(PercentEncoding.form.encode("123 456 is your code") == "123+456+is+your+code")
        #expect(PercentEncoding.form.encode("+1/é&=\n") == "%2B1%2F%C3%A9%26%3D%0A")
        // A link's query (RFC 3986): "~" stays, "*" and a space are encoded.
        #expect(PercentEncoding.rfc3986.encode("a b~*é") == "a%20b~%2A%C3%A9")
        #expect(PercentEncoding.form.encode("a b~*é") == "a+b%7E*%C3%A9")
    }
}
