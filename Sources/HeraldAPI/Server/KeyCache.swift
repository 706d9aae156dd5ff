import Foundation
import HeraldAPIStore
import HeraldRuntime
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// herald-api's API keys in memory, so that an authenticated request costs no database read: a
/// key's row is read once and kept while herald-api listens on `herald_api_keys`, where a
/// revocation is announced at its commit (``APIKeyStore/revoke(id:logger:)``) and drops it.
/// While not listening (at start, after a lost connection) nothing is kept and every key is read.
/// Entries live at most five minutes; unknown ids are never kept (a key made later is found).
/// The secret is judged on every request (an HMAC, constant time).
final class KeyCache: Service, Sendable {
    private let store: APIKeyStore
    private let logger: Logger
    private let state = Mutex(State())
    static let lifetime: Duration = .seconds(300)
    static let maxEntries = 10_000

    private struct Entry {
        var stored: APIKeyStore.Stored
        var at: ContinuousClock.Instant
        /// When this replica last wrote the key's `last_used_at`.
        var touched: ContinuousClock.Instant?
    }

    private struct State {
        var listening = false
        /// Moved by every change heard: a row read before one is not kept.
        var generation: UInt64 = 0
        var entries: [String: Entry] = [:]

        mutating func forget(_ id: String?) {
            generation &+= 1
            if let id { entries[id] = nil } else { entries.removeAll() }
        }
    }

    init(store: APIKeyStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// True when key `id` is kept: judging a secret for it reads nothing.
    func isKept(_ id: String) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in state.listening && state.entries[id].map { now - $0.at < Self.lifetime } == true }
    }

    /// Judges a presented key id and secret: the key's row from memory when it is kept, else
    /// read (and kept, while listening); its use noted at most once a minute.
    func check(id: String, secret: Secret, logger: Logger) async throws -> APIKeyStore.Check {
        let now = ContinuousClock.now
        let (kept, generation) = state.withLock { state -> (Entry?, UInt64) in
            guard state.listening, let entry = state.entries[id], now - entry.at < Self.lifetime else { return (nil, state.generation) }
            return (entry, state.generation)
        }
        guard let kept else {
            let stored = try await store.stored(id: id, logger: logger)
            let check = store.judge(stored, id: id, secret: secret)
            if case .valid = check, let stored {
                try await touchIfDue(id, stored.key.lastUsedAt.map { Date().timeIntervalSince($0) >= 60 } ?? true, logger: logger)
                state.withLock { state in
                    guard state.listening, state.generation == generation else { return }
                    if state.entries.count >= Self.maxEntries { state.entries.removeAll() }
                    state.entries[id] = Entry(stored: stored, at: now, touched: now)
                }
            }
            return check
        }
        let check = store.judge(kept.stored, id: id, secret: secret)
        if case .valid = check {
            let due = kept.touched.map { now - $0 >= .seconds(60) } ?? true
            if due { state.withLock { $0.entries[id]?.touched = now } }
            try await touchIfDue(id, due, logger: logger)
        }
        return check
    }

    private func touchIfDue(_ id: String, _ due: Bool, logger: Logger) async throws {
        if due { try await store.touch(id: id, logger: logger) }
    }

    /// Listens for revocations until shutdown, again after a lost connection (nothing kept meanwhile).
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await self.store.client.withConnection { connection in
                        try await connection.listen(on: APIKeyStore.changesChannel) { notifications in
                            self.state.withLock { state in
                                state.forget(nil)
                                state.listening = true
                            }
                            for try await notification in notifications {
                                self.state.withLock { $0.forget(notification.payload) }
                            }
                        }
                    }
                } catch where !Task.isCancelled {
                    self.logger.warning("not listening for API key revocations; reading every key meanwhile",
                                        metadata: ["error": "\(String(reflecting: type(of: error)))"])
                } catch {}
                self.state.withLock { state in
                    state.listening = false
                    state.forget(nil)
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
