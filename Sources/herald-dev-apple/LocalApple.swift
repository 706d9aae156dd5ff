import Crypto
import Foundation
import HeraldStubs
import NIOConcurrencyHelpers

/// `herald-dev-apple serve DIR`: the local Apple of `make run` (``AppleStubServer`` with its
/// token and revoke endpoints) for the team key `DIR/team-key.p8` (made by
/// scripts/run-local.sh), on a free loopback port written to `DIR/url`. Beside Apple's own
/// endpoints it answers what, in the real world, the user's device gets from Apple:
/// - `GET /dev/code?sub=&client_id=`: an authorization code for that identity (single use, five minutes);
/// - `GET /dev/notification?type=&sub=&email=&client_id=`: a signed server-to-server notification;
/// - `GET /dev/counts?sub=`: what reached Apple for that identity (exchanges, revocations, calls).
/// Runs until it is killed. Never part of a deployment: `make run` only.
enum LocalApple {
    static let teamID = "DEVTEAM001"
    static let keyID = "DEVKEY0001"

    static func serve(directory: String) async throws -> Never {
        let pem = try String(contentsOfFile: directory + "/team-key.p8", encoding: .utf8)
        let teamKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        let stub = try await AppleStubServer()
        let endpoints = stub.tokenEndpoints(teamID: teamID, keyID: keyID, teamKey: teamKey.publicKey)
        stub.route("GET", "/dev/code") { request in
            guard let subject = request.query["sub"], let clientID = request.query["client_id"] else { return missing("sub, client_id") }
            return answer { try await endpoints.issueCode(subject: subject, clientID: clientID) }
        }
        stub.route("GET", "/dev/notification") { request in
            guard let type = request.query["type"], let subject = request.query["sub"], let clientID = request.query["client_id"] else {
                return missing("type, sub, client_id")
            }
            let email = request.query["email"]
            return answer { try await stub.notification(audience: clientID, type: type, subject: subject, email: email, isPrivateEmail: email.map { _ in true }) }
        }
        stub.route("GET", "/dev/counts") { request in
            let counts = endpoints.countsBySubject[request.query["sub"] ?? ""] ?? .init()
            return .init(status: 200, body: #"{"exchanges":\#(counts.exchanges),"exchange_calls":\#(counts.exchangeCalls),"revocations":\#(counts.revocations),"revoke_calls":\#(counts.revokeCalls)}"#)
        }
        try Data((stub.baseURL + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/url"), options: .atomic)
        print("local Apple on \(stub.baseURL) (team \(teamID), key \(keyID))")
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    static func missing(_ fields: String) -> StubHTTPServer.Response {
        .init(status: 400, body: "query parameters required: \(fields)", contentType: "text/plain")
    }

    /// The stub's responders are synchronous: `body` (a signature) runs as a task while the
    /// event-loop thread waits for it. A dev server answering one request at a time can afford it.
    static func answer(_ body: @escaping @Sendable () async throws -> String) -> StubHTTPServer.Response {
        let result = NIOLockedValueBox<(ok: Bool, text: String)?>(nil)
        // 0 until the task has put its outcome in `result`, then 1.
        let done = ConditionLock(value: 0)
        Task {
            let outcome: (ok: Bool, text: String)
            do { outcome = (true, try await body()) } catch { outcome = (false, "\(error)") }
            result.withLockedValue { $0 = outcome }
            done.lock()
            done.unlock(withValue: 1)
        }
        done.lock(whenValue: 1)
        done.unlock()
        let outcome = result.withLockedValue { $0 }!
        return .init(status: outcome.ok ? 200 : 500, body: outcome.text, contentType: "text/plain")
    }
}
