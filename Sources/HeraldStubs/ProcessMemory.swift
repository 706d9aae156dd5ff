import Foundation

/// A process's resident memory from /proc/<pid>/status: the peak (VmHWM, high-water mark of
/// its resident set since it started) and the resident set now (VmRSS), in MB (10⁶ bytes).
/// herald-bench reports it per process; herald-chaos takes herald-api's peak before each kill.
public struct ProcessMemory: Sendable {
    public var pid: Int32
    public var peakMB: Double
    public var residentMB: Double
    /// The resident set now split (RssAnon, RssFile): the process's own memory, and the pages of
    /// its executable and shared libraries it touched (shared with other processes mapping them).
    public var anonymousMB: Double = 0
    public var fileMB: Double = 0

    public static func read(_ pid: Int32) -> ProcessMemory? {
        guard let text = procText("/proc/\(pid)/status") else { return nil }
        var fields: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") || line.hasPrefix("VmRSS:") || line.hasPrefix("RssAnon:") || line.hasPrefix("RssFile:") {
            // "VmRSS:	   43512 kB"
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 3, parts[2] == "kB", let kB = Double(parts[1]) else { continue }
            fields[String(parts[0].dropLast())] = kB * 1024 / 1_000_000
        }
        guard let peak = fields["VmHWM"], let resident = fields["VmRSS"] else { return nil }
        return ProcessMemory(pid: pid, peakMB: peak, residentMB: resident, anonymousMB: fields["RssAnon"] ?? 0, fileMB: fields["RssFile"] ?? 0)
    }

    /// "peak 45.1 MB, at the end 44.0 MB" for each process, joined.
    public static func describe(_ memory: [ProcessMemory]) -> String {
        memory.map { String(format: "pid %d: peak %.1f MB, at the end %.1f MB", $0.pid, $0.peakMB, $0.residentMB) }.joined(separator: "; ")
    }
}
