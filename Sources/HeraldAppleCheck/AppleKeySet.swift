import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1

/// Apple's published signing keys (the JWKS at `apple.jwks_url`), fetched through
/// AsyncHTTPClient and cached for the answer's `Cache-Control: max-age`
/// (`apple.jwks_default_max_age_seconds` without one). A `kid` the cache does not hold makes
/// it fetch again, and so does an expired cache, but never more than once per
/// `apple.jwks_refetch_interval_seconds`: tokens with made-up key ids cannot turn the
/// verifier into a flood of requests to Apple. When a fetch fails, the keys already held
/// stay in use (Apple rotates rarely, and a sign-in should not fail on a blip).
public actor AppleKeySet {
    /// One fetched key set: the keys by `kid`, ready to verify with, and until when to keep it.
    struct Snapshot {
        let keys: JWTKeyCollection
        let keyIDs: Set<String>
        let expiresAt: Date
    }

    public let url: String
    let refetchInterval: TimeInterval
    let defaultMaxAge: TimeInterval
    let timeout: TimeAmount
    let client: HTTPClient
    let logger: Logger
    let now: @Sendable () -> Date

    private var current: Snapshot?
    private var lastAttempt: Date?
    private var inFlight: Task<Snapshot, any Error>?
    /// Fetches started so far (each one GET of the JWKS).
    public private(set) var fetchCount = 0

    /// `client` is shared and outlives this key set (the caller shuts it down); `now` is the
    /// clock (tests move it).
    public init(configuration: AppleConfiguration, client: HTTPClient, logger: Logger,
                now: @escaping @Sendable () -> Date = { Date() }) {
        url = configuration.jwksURL
        refetchInterval = TimeInterval(configuration.jwksRefetchIntervalSeconds)
        defaultMaxAge = TimeInterval(configuration.jwksDefaultMaxAgeSeconds)
        timeout = .milliseconds(Int64(configuration.jwksTimeoutMilliseconds))
        self.client = client
        self.logger = logger
        self.now = now
    }

    /// The keys to verify a token whose header names `kid`: from the cache, else after one
    /// fetch if one is due. Throws `unknownKey` when the set (even fetched again) lacks it,
    /// `keysUnavailable` when there is no set at all.
    func keys(for kid: String) async throws(AppleTokenError) -> JWTKeyCollection {
        if let snapshot = current, now() < snapshot.expiresAt, snapshot.keyIDs.contains(kid) {
            return snapshot.keys
        }
        if inFlight != nil || fetchIsDue {
            do {
                _ = try await refresh()
            } catch let error as AppleTokenError {
                guard current != nil else { throw error }
                logger.warning("apple key set fetch failed; the cached keys stay in use", metadata: ["reason": "\(error)"])
            } catch {
                guard current != nil else { throw .keysUnavailable("fetch failed") }
            }
        }
        guard let snapshot = current else { throw .keysUnavailable("not fetched yet; next attempt after the refetch interval") }
        guard snapshot.keyIDs.contains(kid) else { throw .unknownKey }
        return snapshot.keys
    }

    /// The key ids held now (empty before the first fetch).
    public var keyIDs: Set<String> { current?.keyIDs ?? [] }

    private var fetchIsDue: Bool {
        guard let lastAttempt else { return true }
        return now().timeIntervalSince(lastAttempt) >= refetchInterval
    }

    /// One fetch, shared by every caller that arrives while it runs; each of them stores its
    /// result, so none reads the old set after the fetch (whichever resumes first).
    private func refresh() async throws -> Snapshot {
        let task: Task<Snapshot, any Error>
        if let inFlight {
            task = inFlight
        } else {
            lastAttempt = now()
            fetchCount += 1
            task = Task { try await self.fetch() }
            inFlight = task
        }
        defer { if inFlight == task { inFlight = nil } }
        let snapshot = try await task.value
        current = snapshot
        logger.debug("apple key set fetched", metadata: ["kids": "\(snapshot.keyIDs.sorted())", "max_age": "\(snapshot.expiresAt.timeIntervalSince(now()))"])
        return snapshot
    }

    private func fetch() async throws(AppleTokenError) -> Snapshot {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let status: UInt
        let cacheControl: String?
        let body: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: timeout, logger: logger)
            status = response.status.code
            cacheControl = response.headers.first(name: "Cache-Control")
            body = try await response.body.collect(upTo: 256 * 1024)
        } catch {
            throw .keysUnavailable("\(type(of: error)) fetching the key set")
        }
        guard status == 200 else { throw .keysUnavailable("HTTP \(status) for the key set") }
        let jwks: JWKS
        do {
            jwks = try JSONDecoder().decode(JWKS.self, from: Data(buffer: body))
        } catch {
            throw .keysUnavailable("the key set is not a JWKS")
        }
        let keys = JWTKeyCollection()
        var ids: Set<String> = []
        for jwk in jwks.keys {
            guard let kid = jwk.keyIdentifier?.string, jwk.keyType == .rsa else { continue }
            do {
                try await keys.add(jwk: jwk)
                ids.insert(kid)
            } catch {
                logger.warning("apple key set: a key was skipped", metadata: ["kid": "\(kid)", "reason": "\(error)"])
            }
        }
        guard !ids.isEmpty else { throw .keysUnavailable("the key set holds no usable RSA key") }
        let maxAge = Self.maxAge(cacheControl) ?? defaultMaxAge
        return Snapshot(keys: keys, keyIDs: ids, expiresAt: now().addingTimeInterval(maxAge))
    }

    /// `max-age` of a `Cache-Control` value (`no-store` and `no-cache`: 0); nil when absent.
    static func maxAge(_ header: String?) -> TimeInterval? {
        guard let header else { return nil }
        var result: TimeInterval?
        for directive in header.lowercased().split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            switch parts.first {
            case "no-store", "no-cache": return 0
            case "max-age":
                if parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))), seconds >= 0 {
                    result = TimeInterval(seconds)
                }
            default: break
            }
        }
        return result
    }
}
