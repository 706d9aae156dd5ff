import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of the broker whose existing connections can be frozen
/// (bytes stop flowing both ways, sockets stay open): what a dead peer or a black-holed
/// network looks like to heartbeats. Connections accepted later flow normally. ``pause()``
/// holds every connection's bytes until ``resume()``: a broker that answers late.
public final class FreezingProxy: Sendable {
    private let listener: Int32
    public let port: Int
    private let targetPort: Int
    private let frozenGeneration = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    private let paused = Atomic<Bool>(false)
    private let acceptedCount = Atomic<Int>(0)

    public init(targetPort: Int) throws {
        self.targetPort = targetPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Connections taken so far (a client that came through this proxy).
    public var accepted: Int { acceptedCount.load(ordering: .sequentiallyConsistent) }

    /// Freezes every connection accepted so far.
    public func freezeExistingConnections() {
        frozenGeneration.add(1, ordering: .sequentiallyConsistent)
    }

    /// Holds the bytes of every connection, both ways, until ``resume()``; nothing is lost.
    public func pause() { paused.store(true, ordering: .sequentiallyConsistent) }

    public func resume() { paused.store(false, ordering: .sequentiallyConsistent) }

    /// Stops taking connections. Idempotent: a second call must not close the descriptor again
    /// (its number may belong to another socket by then).
    public func stop() {
        guard !stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .sequentiallyConsistent) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            acceptedCount.add(1, ordering: .sequentiallyConsistent)
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(targetPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(upstream)
                continue
            }
            let generation = frozenGeneration.load(ordering: .sequentiallyConsistent)
            let thread = Thread { [self] in pump(client, upstream, generation: generation) }
            thread.start()
        }
    }

    private func pump(_ a: Int32, _ b: Int32, generation: Int) {
        defer {
            close(a)
            close(b)
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        while !stopped.load(ordering: .sequentiallyConsistent) {
            if frozenGeneration.load(ordering: .sequentiallyConsistent) != generation || paused.load(ordering: .sequentiallyConsistent) {
                usleep(50_000)  // frozen: hold the sockets open, move nothing
                continue
            }
            fds[0].revents = 0
            fds[1].revents = 0
            guard poll(&fds, 2, 50) >= 0 else { return }
            for (from, to) in [(0, b), (1, a)] where fds[from].revents != 0 {
                let n = read(fds[from].fd, &buffer, buffer.count)
                if n <= 0 { return }
                var offset = 0
                while offset < n {
                    let written = buffer[offset..<n].withUnsafeBytes { write(to, $0.baseAddress, n - offset) }
                    if written <= 0 { return }
                    offset += written
                }
            }
        }
    }
}
