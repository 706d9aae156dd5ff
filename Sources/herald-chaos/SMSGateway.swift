import Foundation
import HeraldStubs
import NIOConcurrencyHelpers

/// The SMS provider the fleet sends to: a Standard Webhooks receiver on loopback (Herald's
/// `webhook` provider). It counts what it accepted per verification id (the external sends)
/// and every request per second, and can fail (503), hang, or answer slowly on demand.
final class SMSGateway: Sendable {
    enum Mode: Sendable, Equatable {
        case normal
        case failing
        case hanging
        case slow(Duration)
    }

    private struct State {
        var mode = Mode.normal
        var accepted: [String: Int] = [:]
        var requests: [String: Int] = [:]
        var codes: [String: String] = [:]
        var requestsPerSecond: [Int: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let server: StubHTTPServer
    let codeLength: Int

    init(codeLength: Int) async throws {
        let state = self.state
        server = try await StubHTTPServer { request in
            let second = Int(Date().timeIntervalSince1970)
            let data = ((try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any])?["data"] as? [String: Any]
            let id = data?["verification_id"] as? String
            let mode = state.withLockedValue { s -> Mode in
                s.requestsPerSecond[second, default: 0] += 1
                if let id { s.requests[id, default: 0] += 1 }
                return s.mode
            }
            switch mode {
            case .failing: return .init(status: 503, body: #"{"error":"maintenance"}"#)
            case .hanging: return .hang()
            case .normal, .slow:
                if let id {
                    let code = (data?["text"] as? String).flatMap { SMSGateway.code(in: $0, length: codeLength) }
                    state.withLockedValue { s in
                        s.accepted[id, default: 0] += 1
                        if let code { s.codes[id] = code }
                    }
                }
                if case .slow(let delay) = mode { return .init(status: 200, body: #"{"id":"chaos"}"#, delay: delay) }
                return .init(status: 200, body: #"{"id":"chaos"}"#)
            }
        }
        self.codeLength = codeLength
    }

    var url: String { server.baseURL + "/sms" }

    func set(_ mode: Mode) { state.withLockedValue { $0.mode = mode } }

    /// Sends accepted per verification id.
    var accepted: [String: Int] { state.withLockedValue { $0.accepted } }
    /// Requests per verification id, failed and hung ones included: the attempts.
    var requests: [String: Int] { state.withLockedValue { $0.requests } }
    /// The last code accepted per verification id: what the phones received.
    var codes: [String: String] { state.withLockedValue { $0.codes } }

    /// The highest and the mean number of requests per second between two instants.
    func requestRate(from start: Date, to end: Date) -> (peak: Int, mean: Double) {
        let (a, b) = (Int(start.timeIntervalSince1970), Int(end.timeIntervalSince1970))
        let counts = state.withLockedValue { s in (a...max(a, b)).map { s.requestsPerSecond[$0] ?? 0 } }
        return (counts.max() ?? 0, Double(counts.reduce(0, +)) / Double(max(counts.count, 1)))
    }

    func close() async { await server.close() }

    /// The first run of exactly `length` digits in a text (not part of a longer number).
    static func code(in text: String, length: Int) -> String? {
        codes(in: text, length: length, first: true).first
    }

    /// Every run of exactly `length` digits in a text.
    static func codes(in text: String, length: Int, first: Bool = false) -> Set<String> {
        var found: Set<String> = []
        var start: String.UTF8View.Index?
        var count = 0
        let utf8 = text.utf8
        var i = utf8.startIndex
        while true {
            let isDigit = i < utf8.endIndex && (0x30...0x39).contains(utf8[i])
            if isDigit {
                if start == nil { start = i }
                count += 1
            } else {
                if let s = start, count == length {
                    found.insert(String(text[s..<i]))
                    if first { return found }
                }
                start = nil
                count = 0
            }
            guard i < utf8.endIndex else { return found }
            i = utf8.index(after: i)
        }
    }
}
