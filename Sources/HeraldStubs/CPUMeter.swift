import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// CPU seconds spent by each component between start() and stop(), from /proc.
public struct CPUUsage: Sendable {
    public var broker: Double
    public var postgres: Double
    public var workers: Double
    public var bench: Double
    /// Wall-clock seconds between start() and stop(): (sum of the components) / wall is the
    /// number of cores they kept busy, at most the machine's.
    public var wall: Double = 0
    /// CPU seconds every process of the machine spent (/proc/stat's busy time, all CPUs): minus
    /// the components, what else ran on a shared machine during the run.
    public var machine: Double = 0

    public var total: Double { broker + postgres + workers + bench }

    /// "broker 0.21 · postgres 1.35 · worker 0.80 · bench 0.40 ms/job" for `jobs` jobs
    public func perJob(_ jobs: Int) -> String {
        let per = perJobMilliseconds(jobs)
        return String(format: "broker %.2f · postgres %.2f · worker %.2f · bench %.2f ms/job", per.broker, per.postgres, per.workers, per.bench)
    }

    /// The same figures as a table cell: "0.21·1.35·0.80·0.40".
    public func perJobCell(_ jobs: Int) -> String {
        let per = perJobMilliseconds(jobs)
        return String(format: "%.2f·%.2f·%.2f·%.2f", per.broker, per.postgres, per.workers, per.bench)
    }

    public func perJobMilliseconds(_ jobs: Int) -> CPUUsage {
        let scale = 1000 / Double(max(jobs, 1))
        return CPUUsage(broker: broker * scale, postgres: postgres * scale, workers: workers * scale, bench: bench * scale, wall: wall,
                        machine: machine * scale)
    }
}

/// Reads the CPU time of the benchmark's components from /proc/<pid>/stat: utime + stime
/// (the process's own, all threads) and cutime + cstime (its children that exited and that it
/// reaped), in clock ticks of `sysconf(_SC_CLK_TCK)`.
///
/// A component is a process tree: the RabbitMQ `beam.smp` (with erl_child_setup and
/// inet_gethost) and the PostgreSQL postmaster (with its backends, walwriter, autovacuum…).
/// Its value at one snapshot is the sum, over every process of the tree alive then, of
/// utime + stime + cutime + cstime; the usage is stop's value minus start's. That counts each
/// per-pid case exactly: a process alive at both contributes its own delta; one born after
/// start counts from 0; one that exited in between left its whole time in its parent's cutime
/// (the postmaster reaps its backends), and its value at start is subtracted, so only what it
/// spent during the run remains. Worker processes count their own utime + stime only; the
/// bench is /proc/self, utime + stime only (its reaped children are the workers).
public final class CPUMeter: Sendable {
    private let workerPIDs: [Int32]
    private let brokerRoots: [Int32]
    private let postmaster: Int32
    private let startValues: CPUUsage
    private let started: ContinuousClock.Instant

    /// workerPIDs: real worker processes (empty when the workers run inside herald-bench: then they are in `bench`).
    public static func start(workerPIDs: [Int32] = []) throws -> CPUMeter {
        let table = ProcTable.read()
        let broker = table.rabbitMQ()
        guard !broker.isEmpty else { throw CPUMeterError("no RabbitMQ beam.smp process found in /proc (is `scripts/services.sh start` running it?)") }
        let postmaster = try table.postmaster()
        return try CPUMeter(workerPIDs: workerPIDs, brokerRoots: broker, postmaster: postmaster, table: table)
    }

    private init(workerPIDs: [Int32], brokerRoots: [Int32], postmaster: Int32, table: ProcTable) throws {
        self.workerPIDs = workerPIDs
        self.brokerRoots = brokerRoots
        self.postmaster = postmaster
        self.started = .now
        self.startValues = try Self.values(table, workerPIDs: workerPIDs, brokerRoots: brokerRoots, postmaster: postmaster)
    }

    public func stop() throws -> CPUUsage {
        let end = try Self.values(ProcTable.read(), workerPIDs: workerPIDs, brokerRoots: brokerRoots, postmaster: postmaster)
        return CPUUsage(broker: end.broker - startValues.broker, postgres: end.postgres - startValues.postgres,
                        workers: end.workers - startValues.workers, bench: end.bench - startValues.bench,
                        wall: (ContinuousClock.now - started).seconds, machine: end.machine - startValues.machine)
    }

    private static func values(_ table: ProcTable, workerPIDs: [Int32], brokerRoots: [Int32], postmaster: Int32) throws -> CPUUsage {
        guard table.processes[postmaster] != nil else { throw CPUMeterError("the PostgreSQL postmaster (pid \(postmaster)) is gone") }
        var workers: UInt64 = 0
        for pid in workerPIDs {
            guard let worker = table.processes[pid] else { throw CPUMeterError("worker pid \(pid) exited before the CPU was read") }
            workers += worker.own
        }
        let bench = table.processes[getpid()]?.own ?? 0
        let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
        return CPUUsage(broker: Double(table.treeTotal(brokerRoots)) / tick, postgres: Double(table.treeTotal([postmaster])) / tick,
                        workers: Double(workers) / tick, bench: Double(bench) / tick, machine: Double(machineBusyTicks()) / tick)
    }

    /// /proc/stat's first line, "cpu  user nice system idle iowait irq softirq steal …" (clock
    /// ticks, all CPUs): every field but idle and iowait.
    static func machineBusyTicks() -> UInt64 {
        guard let line = procText("/proc/stat")?.split(separator: "\n").first, line.hasPrefix("cpu ") else { return 0 }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 8 else { return 0 }
        return fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7]
    }
}

public struct CPUMeterError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = "CPU meter: " + description }
}

/// One process's fields of /proc/<pid>/stat that the meter uses, in clock ticks.
public struct ProcStat: Equatable, Sendable {
    public var pid: Int32
    public var comm: String
    public var ppid: Int32
    public var utime: UInt64
    public var stime: UInt64
    public var cutime: UInt64
    public var cstime: UInt64

    /// Its own CPU (all threads).
    public var own: UInt64 { utime + stime }
    /// Its own and its reaped children's.
    public var withReaped: UInt64 { utime + stime + cutime + cstime }

    /// Parses the text of /proc/<pid>/stat (proc(5)): "pid (comm) state ppid … utime stime
    /// cutime cstime …"; comm may hold spaces and parentheses, so the fields after it are
    /// counted from the last ')'.
    public init?(_ text: String) {
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close,
              let pid = Int32(text[..<open].trimmingCharacters(in: .whitespaces)) else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3 (state): field n is fields[n - 3].
        guard fields.count > 14, let ppid = Int32(fields[1]), let utime = UInt64(fields[11]), let stime = UInt64(fields[12]),
              let cutime = Int64(fields[13]), let cstime = Int64(fields[14]) else { return nil }
        self.pid = pid
        self.comm = String(text[text.index(after: open)..<close])
        self.ppid = ppid
        self.utime = utime
        self.stime = stime
        self.cutime = UInt64(max(cutime, 0))
        self.cstime = UInt64(max(cstime, 0))
    }

    public static func read(_ pid: Int32) -> ProcStat? {
        procText("/proc/\(pid)/stat").flatMap(ProcStat.init)
    }
}

/// Every process of /proc at one moment.
public struct ProcTable {
    public var processes: [Int32: ProcStat] = [:]

    public static func read() -> ProcTable {
        var table = ProcTable()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = ProcStat.read(pid) else { continue }
            table.processes[pid] = stat
        }
        return table
    }

    /// utime + stime + cutime + cstime over the roots and all their live descendants.
    public func treeTotal(_ roots: [Int32]) -> UInt64 {
        var children: [Int32: [Int32]] = [:]
        for process in processes.values { children[process.ppid, default: []].append(process.pid) }
        var total: UInt64 = 0
        var seen = Set<Int32>()
        var stack = roots
        while let pid = stack.popLast() {
            guard seen.insert(pid).inserted, let process = processes[pid] else { continue }
            total += process.withReaped
            stack.append(contentsOf: children[pid] ?? [])
        }
        return total
    }

    /// The RabbitMQ node's beam.smp processes (the Erlang VM whose command line names rabbit).
    public func rabbitMQ() -> [Int32] {
        processes.values.filter { $0.comm == "beam.smp" && (procArguments($0.pid).contains { $0.contains("rabbit") }) }.map(\.pid).sorted()
    }

    /// The postmaster of the PostgreSQL the bench uses: the one of the project's data directory
    /// (.run/postgres, its pid on the first line of postmaster.pid, its port on the fourth) when
    /// it listens on HERALD_DATABASE_URL's port, else the process started as `…/postgres -D <dir>`
    /// whose postmaster.pid names that port.
    public func postmaster() throws -> Int32 {
        let port = ProcessInfo.processInfo.environment["HERALD_DATABASE_URL"].flatMap { URLComponents(string: $0)?.port }
        let local = FileManager.default.currentDirectoryPath + "/.run/postgres/postmaster.pid"
        if let lines = procText(local)?.split(separator: "\n", omittingEmptySubsequences: false), let first = lines.first,
           let pid = Int32(first), processes[pid] != nil, port == nil || (lines.count > 3 && Int(lines[3]) == port) {
            return pid
        }
        let candidates = processes.values.compactMap { process -> (pid: Int32, port: Int?)? in
            let arguments = procArguments(process.pid)
            guard let program = arguments.first, ["postgres", "postmaster"].contains((program as NSString).lastPathComponent),
                  let d = arguments.firstIndex(of: "-D"), d + 1 < arguments.count else { return nil }
            let lines = procText(arguments[d + 1] + "/postmaster.pid")?.split(separator: "\n", omittingEmptySubsequences: false) ?? []
            return (process.pid, lines.count > 3 ? Int(lines[3]) : nil)
        }
        let matching = port.map { port in candidates.filter { $0.port == port } } ?? candidates
        guard matching.count == 1, let found = matching.first else {
            throw CPUMeterError("\(matching.isEmpty ? "no" : "more than one") PostgreSQL postmaster found in /proc\(port.map { " for port \($0)" } ?? "") (looked for .run/postgres/postmaster.pid and `postgres -D <dir>`)")
        }
        return found.pid
    }
}

/// A process's command line (/proc/<pid>/cmdline, NUL-separated).
public func procArguments(_ pid: Int32) -> [String] {
    guard let bytes = procBytes("/proc/\(pid)/cmdline") else { return [] }
    return bytes.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
}

public func procText(_ path: String) -> String? { procBytes(path).map { String(decoding: $0, as: UTF8.self) } }

/// Reads a whole file with read(2): /proc files have no size to read ahead by.
public func procBytes(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { return result }
        result.append(contentsOf: buffer[0..<n])
    }
}
