import Foundation
import HeraldStubs
#if canImport(Glibc)
import Glibc
#endif

/// `BENCH_ONLY=cpumeter`: checks the /proc reading of ``CPUMeter`` on real processes whose CPU
/// is known from below: python3 children that spin until their own `time.process_time()`
/// (utime + stime) reaches a given figure. herald-bench is an executable (no test target reaches
/// it), so this is its test: it throws on a figure outside the bounds.
func cpuMeterSelfCheck() async throws {
    let tick = Double(sysconf(Int32(_SC_CLK_TCK)))
    /// Spins, then (with `thenSleep`) becomes `sleep 60` by exec: the same process, its CPU
    /// times kept, its comm "sleep" telling that the spinning is over.
    func spin(_ seconds: Double, sleepFirst: Double = 0, thenSleep: Bool = true) -> String {
        "import os, time\ntime.sleep(\(sleepFirst))\nt = time.process_time()\nwhile time.process_time() < t + \(seconds): pass\n"
            + (thenSleep ? "os.execv('/bin/sleep', ['sleep', '60'])" : "")
    }
    func state(_ pid: Int32) -> Character? {
        procText("/proc/\(pid)/stat").flatMap { text in text.lastIndex(of: ")").map { text[text.index($0, offsetBy: 2)] } }
    }
    /// Waits until the process has become `sleep` (its CPU no longer moves).
    func settle(_ pid: Int32) async throws -> ProcStat {
        for _ in 0..<200 {
            try await Task.sleep(for: .milliseconds(100))
            if let now = ProcStat.read(pid), now.comm == "sleep" { return now }
        }
        throw BenchFailure("cpumeter check: pid \(pid) did not settle within 20 s")
    }
    func check(_ name: String, _ value: Double, _ range: ClosedRange<Double>) throws {
        print(String(format: "%@: %.3f s (expected %.2f…%.2f)", name, value, range.lowerBound, range.upperBound))
        guard range.contains(value) else { throw BenchFailure("cpumeter check failed: \(name) = \(value), outside \(range)") }
    }
    let slack = 3 / tick

    // A comm with spaces and parentheses: the fields are counted from the last ')'.
    let line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 1234 567 89 10 20 0 1 0 555 1000 100"
    guard let parsed = ProcStat(line), parsed.pid == 4242, parsed.comm == "a (b) c", parsed.ppid == 17,
          parsed.utime == 1234, parsed.stime == 567, parsed.cutime == 89, parsed.cstime == 10 else {
        throw BenchFailure("cpumeter check failed: /proc/<pid>/stat line parsed as \(String(describing: ProcStat(line)))")
    }
    print("a stat line whose comm holds spaces and parentheses: parsed")

    // utime + stime of a process: at least the 0.5 s it spun, at most that plus the interpreter's start.
    let own = try ChildProcess("/usr/bin/python3", ["-c", spin(0.5)], outputPath: "/dev/null")
    defer { own.signal(SIGKILL) }
    try check("own utime+stime of a child that spun 0.5 s", Double(try await settle(own.pid).own) / tick, (0.5 - slack)...1.5)

    // cutime + cstime: a shell that ran two such children one after the other and reaped them.
    let parent = try ChildProcess("/bin/sh", ["-c", "python3 -c \"\(spin(0.3, thenSleep: false))\"; python3 -c \"\(spin(0.3, thenSleep: false))\"; exec sleep 60"], outputPath: "/dev/null")
    defer { parent.signal(SIGKILL) }
    let reaped = try await settle(parent.pid)
    try check("reaped children (cutime+cstime) of a shell that ran two 0.3 s children", Double(reaped.cutime + reaped.cstime) / tick, (0.6 - slack)...2.0)
    try check("the shell's tree total", Double(ProcTable.read().treeTotal([parent.pid])) / tick, (0.6 - slack)...2.2)

    // The meter between start and stop: a worker that sleeps through start, then spins 0.4 s.
    let worker = try ChildProcess("/usr/bin/python3", ["-c", spin(0.4, sleepFirst: 1.5)], outputPath: "/dev/null")
    defer { worker.signal(SIGKILL) }
    for _ in 0..<100 where state(worker.pid) != "S" { try await Task.sleep(for: .milliseconds(20)) }
    try await Task.sleep(for: .milliseconds(200))
    let meter = try CPUMeter.start(workerPIDs: [worker.pid])
    _ = try await settle(worker.pid)
    let usage = try meter.stop()
    try check("CPUMeter workers, a child spinning 0.4 s after start()", usage.workers, (0.4 - slack)...0.6)
    print(String(format: "cpumeter check passed; during it: broker %.3f s, postgres %.3f s, bench %.3f s over %.1f s", usage.broker, usage.postgres, usage.bench, usage.wall))
}
