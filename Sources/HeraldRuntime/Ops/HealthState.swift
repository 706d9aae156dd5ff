import Synchronization
import ServiceLifecycle

/// What `/healthz` and `/readyz` answer from. `/readyz` is false while the broker or the
/// database is unreachable and while the process drains.
public final class HealthState: Sendable {
    private struct State {
        var databaseUp = false
        var presenceHeld = false
        var draining = false
    }
    private let state = Mutex(State())
    private let brokerProbe: Mutex<(@Sendable () -> Bool)?> = Mutex(nil)

    public init() {}

    public var databaseUp: Bool {
        get { state.withLock { $0.databaseUp } }
        set { state.withLock { $0.databaseUp = newValue } }
    }

    public var presenceHeld: Bool {
        get { state.withLock { $0.presenceHeld } }
        set { state.withLock { $0.presenceHeld = newValue } }
    }

    public var draining: Bool {
        get { state.withLock { $0.draining } }
        set { state.withLock { $0.draining = newValue } }
    }

    /// Set once by the app: tells whether the broker connection is up right now.
    public func setBrokerProbe(_ probe: @escaping @Sendable () -> Bool) {
        brokerProbe.withLock { $0 = probe }
    }

    public var brokerUp: Bool { (brokerProbe.withLock { $0 })?() ?? false }

    /// Ready to take work: broker and database reachable, not draining.
    public var ready: Bool { brokerUp && databaseUp && presenceHeld && !draining }

    /// The reasons `/readyz` says no, for its body.
    public var notReadyReasons: [String] {
        var reasons: [String] = []
        if !brokerUp { reasons.append("broker unreachable") }
        if !databaseUp { reasons.append("database unreachable") }
        if databaseUp && !presenceHeld { reasons.append("presence lock not held") }
        if draining { reasons.append("draining") }
        return reasons
    }
}

extension Task where Success == Never, Failure == Never {
    /// Cancelled, or the service group asked for a graceful shutdown.
    public static var isCancelledOrShuttingDown: Bool { isCancelled || isShuttingDownGracefully }
}
