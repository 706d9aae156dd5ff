import Crypto
import Foundation
import HeraldStubs
import NIOConcurrencyHelpers

/// The APNs the fleet pushes to: Herald's local HTTP/2 TLS server that speaks Apple's
/// provider API (`APNsStubServer`, JWT checked), with a `.p8` key and TLS material made for
/// the run. It counts the pushes it accepted per receipt (the external sends), keeps the
/// secrets the devices got (for the secrecy search), and fails (503) or hangs on demand.
final class APNsGateway: Sendable {
    enum Mode: Sendable {
        case normal
        case failing
        /// Requests are answered (503, not accepted) only after this long: past the
        /// provider's timeout, so to the workers the server hangs.
        case hanging(Duration)
    }

    private struct State {
        var mode = Mode.normal
        var accepted: [String: Int] = [:]
        var secrets: [String: String] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let server: APNsStubServer
    let tls: TestTLS
    let keyFile: String
    let keyID = "CHAOSKEY01"
    let teamID = "CHAOSTEAM1"

    init(directory: String) async throws {
        tls = try await TestTLS.make()
        let key = P256.Signing.PrivateKey()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        keyFile = directory + "/apns-key.p8"
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyFile))
        let state = self.state
        server = try await APNsStubServer(tls: tls, credentials: .init(publicKey: key.publicKey, keyID: keyID, teamID: teamID), record: false) { request in
            let inner = request.payload["herald"] as? [String: String]
            return state.withLockedValue { s in
                switch s.mode {
                case .failing: return .init(status: 503, reason: "ServiceUnavailable")
                case .hanging(let delay): return .init(status: 503, reason: "ServiceUnavailable", delay: delay)
                case .normal: break
                }
                if let receipt = inner?["receipt"] {
                    s.accepted[receipt, default: 0] += 1
                    if let secret = inner?["secret"] { s.secrets[receipt] = secret }
                }
                return .ok
            }
        }
    }

    /// The workers' settings: live delivery to this server for both environments.
    var environment: [String: String] {
        ["HERALD_PUSH_DELIVERY": "live", "HERALD_PUSH_RATE_LIMIT_MAX": "0",
         "HERALD_PUSH_APNS_KEY_FILE": keyFile, "HERALD_PUSH_APNS_KEY_ID": keyID, "HERALD_PUSH_APNS_TEAM_ID": teamID,
         "HERALD_PUSH_APNS_PRODUCTION_HOST": server.baseURL, "HERALD_PUSH_APNS_SANDBOX_HOST": server.baseURL,
         "HERALD_PUSH_APNS_CA_FILE": tls.caFile]
    }

    func set(_ mode: Mode) { state.withLockedValue { $0.mode = mode } }
    var accepted: [String: Int] { state.withLockedValue { $0.accepted } }
    var secrets: [String: String] { state.withLockedValue { $0.secrets } }

    func close() async {
        await server.close()
        tls.remove()
    }
}
