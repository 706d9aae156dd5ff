import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import NIOConcurrencyHelpers

/// Twilio's Calls API, as ``TwilioStubServer`` serves it: `POST …/Calls.json` (after the server's
/// Basic auth) with `To` in E.164 (21217), `From` (21213), exactly one of `Url` and `Twiml` (21205),
/// a `Twiml` of at most 4,000 characters (21219) that parses as TwiML: a `<Response>` of `<Say>` and
/// `<Pause>` only, each `<Say>` with text and a `language` (else 12100, as Twilio's TwiML errors
/// come back), a `Timeout` of 5 to 600 (21207), `StatusCallback` an http(s) URL, each
/// `StatusCallbackEvent` one of initiated, ringing, answered, completed. 201 with the call (`sid`
/// `CA…`, `status` queued). Then each step of ``script`` whose event was asked for is posted to
/// the `StatusCallback`, signed as Twilio signs, with `CallSid`, `CallStatus`, `CallbackSource`,
/// `SequenceNumber`, `Timestamp` (RFC 1123), `Direction`, `From`, `To`, and `CallDuration` when
/// completed or `SipResponseCode` when it failed.
public final class TwilioCallsStub: Sendable {
    /// A call Twilio placed: what it says (each `<Say>`'s language and text, in order).
    public struct Call: Sendable {
        public var sid: String
        public var to: String
        public var from: String
        public var says: [(language: String, text: String)]
        public var timeout: Int
        public var statusCallback: String?
        public var events: [String]
    }

    /// One status callback: the call's status (queued, initiated, ringing, in-progress, completed,
    /// busy, no-answer, failed, canceled) and the wait before it.
    public struct Step: Sendable {
        public var status: String
        public var after: Duration
        public init(_ status: String, after: Duration = .milliseconds(50)) {
            self.status = status
            self.after = after
        }
    }

    private struct State {
        var script: [Step] = [Step("initiated"), Step("ringing"), Step("in-progress"), Step("completed")]
        var calls: [Call] = []
        var posted: [TwilioStubServer.Posted] = []
        var down = false
    }

    private let state = NIOLockedValueBox(State())
    let accountSID: String
    let authToken: String

    init(accountSID: String, authToken: String) {
        self.accountSID = accountSID
        self.authToken = authToken
    }

    public var calls: [Call] { state.withLockedValue { $0.calls } }
    public var posted: [TwilioStubServer.Posted] { state.withLockedValue { $0.posted } }
    /// The callbacks each later call gets (`[]`: none).
    public func script(_ steps: [Step]) { state.withLockedValue { $0.script = steps } }
    /// Answers 503 to every call while down.
    public func down(_ down: Bool) { state.withLockedValue { $0.down = down } }

    /// The event of `StatusCallbackEvent` a call status belongs to.
    static func event(of status: String) -> String {
        switch status {
        case "queued", "initiated": "initiated"
        case "ringing": "ringing"
        case "in-progress": "answered"
        default: "completed"
        }
    }

    func answer(_ request: StubHTTPServer.Request) -> StubHTTPServer.Response {
        if state.withLockedValue({ $0.down }) { return TwilioStubServer.error(503, 20500, "Service unavailable") }
        let pairs = Self.pairs(request.bodyText)
        let form = Dictionary(pairs, uniquingKeysWith: { first, _ in first })
        guard let to = form["To"], to.range(of: #"^\+[1-9][0-9]{6,14}$"#, options: .regularExpression) != nil else {
            return TwilioStubServer.error(400, 21217, "Phone number is not a valid phone number")
        }
        guard let from = form["From"], !from.isEmpty else { return TwilioStubServer.error(400, 21213, "Caller phone number is required") }
        guard (form["Url"] == nil) != (form["Twiml"] == nil) else {
            return TwilioStubServer.error(400, 21205, "Url or Twiml is required, not both")
        }
        guard let twiml = form["Twiml"] else { return TwilioStubServer.error(400, 21205, "This stand-in takes Twiml only") }
        guard twiml.count <= 4_000 else { return TwilioStubServer.error(400, 21219, "Twiml exceeds 4000 characters") }
        guard let says = TwiMLReader.says(twiml) else { return TwilioStubServer.error(400, 12100, "Document parse failure") }
        let timeout = form["Timeout"].map { Int($0) ?? -1 } ?? 60
        guard (5...600).contains(timeout) else { return TwilioStubServer.error(400, 21207, "Timeout must be between 5 and 600") }
        let callback = form["StatusCallback"]
        if let callback {
            guard callback.count <= 1_000, let url = URL(string: callback), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                return TwilioStubServer.error(400, 21609, "Invalid StatusCallback")
            }
        }
        let events = pairs.filter { $0.0 == "StatusCallbackEvent" }.map(\.1)
        guard events.allSatisfy({ ["initiated", "ringing", "answered", "completed"].contains($0) }) else {
            return TwilioStubServer.error(400, 21626, "Invalid StatusCallbackEvent")
        }
        let sid = "CA" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let script = state.withLockedValue { state in
            state.calls.append(Call(sid: sid, to: to, from: from, says: says, timeout: timeout, statusCallback: callback, events: events))
            return state.script
        }
        if let callback {
            // Twilio posts `completed` whatever was asked; the others only when asked for.
            let steps = script.filter { events.contains(Self.event(of: $0.status)) || Self.event(of: $0.status) == "completed" }
            post(steps, sid: sid, from: from, to: to, callback: callback)
        }
        let body: [String: Any] = [
            "sid": sid, "account_sid": accountSID, "to": to, "from": from, "status": "queued", "direction": "outbound-api",
            "api_version": "2010-04-01", "uri": "/2010-04-01/Accounts/\(accountSID)/Calls/\(sid).json",
        ]
        let json = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
        return .init(status: 201, body: String(decoding: json, as: UTF8.self))
    }

    private func post(_ steps: [Step], sid: String, from: String, to: String, callback: String) {
        let (state, accountSID, authToken) = (state, accountSID, authToken)
        Task {
            for (index, step) in steps.enumerated() {
                try? await Task.sleep(for: step.after)
                var fields = [("AccountSid", accountSID), ("ApiVersion", "2010-04-01"), ("CallSid", sid), ("CallStatus", step.status),
                              ("CallbackSource", "call-progress-events"), ("Direction", "outbound-api"), ("From", from), ("To", to),
                              ("SequenceNumber", String(index)), ("Timestamp", Self.rfc1123(Date()))]
                if step.status == "completed" { fields.append(("CallDuration", "14")) }
                if step.status == "failed" { fields.append(("SipResponseCode", "500")) }
                if step.status == "busy" { fields.append(("SipResponseCode", "486")) }
                let answer = await TwilioStubServer.post(fields, to: callback, authToken: authToken)
                state.withLockedValue { $0.posted.append(TwilioStubServer.Posted(sid: sid, status: step.status, answer: answer)) }
            }
        }
    }

    /// Every name and value of a form body, in order (`StatusCallbackEvent` comes once per event).
    static func pairs(_ body: String) -> [(String, String)] {
        body.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    static func rfc1123(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter.string(from: date)
    }
}

/// Reads TwiML as Twilio's parser would for a call that only speaks: nil unless the document is
/// well-formed XML whose root is `<Response>`, holding only `<Say language="…">text</Say>` and
/// `<Pause length="n"/>` (1 to 100 s).
enum TwiMLReader {
    static func says(_ twiml: String) -> [(language: String, text: String)]? {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(twiml.utf8))
        parser.delegate = delegate
        guard parser.parse(), delegate.valid, delegate.sawRoot, !delegate.says.isEmpty else { return nil }
        return delegate.says
    }

    private final class Delegate: NSObject, XMLParserDelegate {
        var says: [(language: String, text: String)] = []
        var valid = true
        var sawRoot = false
        private var depth = 0
        private var language: String?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            depth += 1
            switch (depth, name) {
            case (1, "Response"): sawRoot = true
            case (2, "Say"):
                guard let language = attributes["language"], !language.isEmpty else { valid = false; return }
                self.language = language
                text = ""
            case (2, "Pause"):
                guard let length = attributes["length"].flatMap(Int.init), (1...100).contains(length) else { valid = false; return }
            default: valid = false
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if depth == 2, language != nil { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if depth == 2, name == "Say", let language {
                let spoken = text.trimmingCharacters(in: .whitespacesAndNewlines)
                if spoken.isEmpty { valid = false }
                says.append((language, spoken))
                self.language = nil
            }
            depth -= 1
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { valid = false }
    }
}
