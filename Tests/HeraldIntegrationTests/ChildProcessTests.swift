import Foundation
import HeraldStubs
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A child started by the harness (``ChildProcess``) holds none of the test process's
/// descriptors: NIO opens its sockets without close-on-exec, and a worker holding a copy of a test's
/// database connection kept it open after the test closed it, its transaction idle and its
/// locks held (a migration's, which every later migration then waited for).
@Suite struct ChildProcessTests {
    @Test func aChildInheritsNoDescriptorButItsOutput() async throws {
        // A descriptor without close-on-exec, as NIO's sockets are.
        let fd = open("/dev/null", O_RDONLY)
        #expect(fd >= 3)
        defer { close(fd) }
        let listing = try await ChildProcess.run("/bin/sh", ["-c", "ls /proc/$$/fd"])
        let open = Set(listing.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) })
        #expect(!open.contains(fd), "the child holds the test's descriptor \(fd): \(open.sorted())")
        #expect(open.isSuperset(of: [0, 1, 2]))
    }
}
