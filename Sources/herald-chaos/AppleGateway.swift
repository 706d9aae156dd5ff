import Crypto
import Foundation
import HeraldApple
import HeraldRuntime
import HeraldStubs
import HeraldWire
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The Apple the herald-apple worker calls: the local Apple (`AppleStubServer`: JWKS, token
/// and revoke endpoints checking the client secret as Apple does), with a team `.p8` key and
/// token keys made for the run. Each apple job of the load gets an account of its own (id: the
/// job's message id) linked to an Apple identity, and a code the local Apple issued for it;
/// the local Apple counts, per identity, the code exchanges and revocations and the calls
/// that carried each code or token. An outage makes both endpoints answer 503, or hang.
final class AppleGateway: Sendable {
    /// A job of the load: `apple.token`, or `apple.revoke` with a fresh code (exchanged, then
    /// revoked: both endpoints, with nothing stored before).
    enum LoadJob: Sendable {
        case token(AppleTokenJob)
        case revoke(AppleRevokeJob)
    }

    let stub: AppleStubServer
    let endpoints: AppleTokenEndpoints
    let database: PostgresClient
    let logger: Logger
    let teamID = "CHAOSTEAM2"
    let keyID = "CHAOSKEY02"
    let clientID = "com.example.chaos"
    let keyFile: String
    let tokenKeysFile: String
    /// The secret lines of the team's `.p8` (its base64 body) and the token key, for the
    /// secrecy search.
    let keyMaterial: Set<String>
    /// Job id → true for `apple.token`, false for `apple.revoke`; they alternate in the order made.
    private let kinds = NIOLockedValueBox<[String: Bool]>([:])

    init(directory: String, database: PostgresClient, logger: Logger) async throws {
        let key = P256.Signing.PrivateKey()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        keyFile = directory + "/apple-team-key.p8"
        tokenKeysFile = directory + "/apple-token-keys"
        try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyFile))
        let tokenKey = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try Data("chaos1:\(tokenKey)\n".utf8).write(to: URL(fileURLWithPath: tokenKeysFile))
        keyMaterial = Set(key.pemRepresentation.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("-----") } + [tokenKey])
        stub = try await AppleStubServer()
        endpoints = stub.tokenEndpoints(teamID: teamID, keyID: keyID, teamKey: key.publicKey)
        self.database = database
        self.logger = logger
    }

    /// herald-apple's settings: the local Apple on loopback (clear text allowed for it), a
    /// timeout of 5 s: a hang is a retried failure, and an answer the loaded machine delays
    /// (1 s was too short: the kill scenario saw exchanges answered after it) is not taken for one.
    var environment: [String: String] {
        ["HERALD_APPLE_CLIENT_IDS": clientID, "HERALD_APPLE_JWKS_URL": stub.jwksURL,
         "HERALD_APPLE_TOKEN_URL": stub.tokenURL, "HERALD_APPLE_REVOKE_URL": stub.revokeURL,
         "HERALD_APPLE_ALLOW_INSECURE_TRANSPORT": "true",
         "HERALD_APPLE_TEAM_ID": teamID, "HERALD_APPLE_KEY_ID": keyID,
         "HERALD_APPLE_PRIVATE_KEY_FILE": keyFile, "HERALD_APPLE_TOKEN_KEYS_FILE": tokenKeysFile,
         "HERALD_APPLE_TIMEOUT_MS": "5000"]
    }

    /// The Apple `sub` of the account of job `id`.
    static func subject(for id: String) -> String { "001." + id.filter { $0.isLetter || $0.isNumber } + ".0" }

    /// The account of job `id` (created once, linked to its Apple identity) and the job:
    /// `apple.token` and `apple.revoke` with a code, alternately.
    func job(id: String) async throws -> LoadJob {
        let subject = Self.subject(for: id)
        _ = try await AccountStore(client: database, logger: logger).createAccount(id: id, provider: "apple.com", providerUID: subject)
        let code = try await endpoints.issueCode(subject: subject, clientID: clientID)
        let isToken = kinds.withLockedValue { kinds in
            if let known = kinds[id] { return known }
            kinds[id] = kinds.count % 2 == 0
            return kinds[id]!
        }
        return isToken ? .token(AppleTokenJob(accountID: id, clientID: clientID, authorizationCode: code))
            : .revoke(AppleRevokeJob(accountID: id, clientID: clientID, authorizationCode: code))
    }

    /// Whether job `id` is an `apple.token` (else an `apple.revoke`); nil: not an apple job made here.
    func isToken(_ id: String) -> Bool? { kinds.withLockedValue { $0[id] } }

    /// Apple down: both endpoints answer 503 (`failing`) or never answer (`hanging`); nil: up.
    func set(outage: AppleTokenEndpoints.Failure?) {
        if let outage { endpoints.startOutage(outage) } else { endpoints.endOutage() }
    }

    func close() async { await stub.close() }
}
