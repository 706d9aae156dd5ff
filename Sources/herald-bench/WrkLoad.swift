import Foundation
import HeraldStubs
#if canImport(Glibc)
import Glibc
#endif

/// One run of `wrk` (Debian's, `apt-get install wrk`; scripts/services.sh install-bench installs it) against
/// an HTTP server: `connections` keep-alive connections over `threads` threads for `seconds`,
/// each request made by ``WrkLoad/script`` (start or check bodies, unique ids), optionally paced
/// to `rate` requests a second in total. The CPU of every component is read around the run
/// (``CPUMeter``): the server process (`serverPID`, herald-api) as its worker, and wrk's from
/// herald-bench's reaped children (wrk is herald-bench's child, and the only one reaped during the run).
struct WrkLoad {
    enum Kind: String { case start, check }

    var url: String
    var kind: Kind
    /// Ids: start makes `<prefix>-<thread>-<n>`; check reads `<prefix>-<i>` for i in 0..<seeded,
    /// each thread its own stride of them, again from the first once past the last.
    var prefix: String
    var seeded = 0
    var authorization = ""
    var connections: Int
    var threads: Int
    var seconds: Int
    /// Requests a second over all connections; nil: as fast as the server answers.
    var rate: Double?

    /// What wrk measured and the CPU of the run.
    struct Result {
        var requests: Int
        var seconds: Double
        var p50: Double
        var p99: Double
        /// Answers that were not 2xx or 3xx, and socket errors and timeouts.
        var failed: Int
        var cpu: CPUUsage
        /// wrk's own CPU seconds.
        var client: Double
        var rate: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    }

    func run(serverPID: Int32?) async throws -> Result {
        let scriptPath = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-wrk-\(UUID().uuidString.prefix(8)).lua").path
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scriptPath) }
        let arguments = ["-t", String(threads), "-c", String(connections), "-d", "\(seconds)s", "--timeout", "10s", "-s", scriptPath, url, "--",
                         kind.rawValue, prefix, String(seeded), String(threads), rate.map { String(format: "%.3f", $0) } ?? "0", authorization]
        let reapedBefore = ProcStat.read(getpid()).map { $0.cutime + $0.cstime } ?? 0
        let meter = try CPUMeter.start(workerPIDs: serverPID.map { [$0] } ?? [])
        let wrk = try ChildProcess(Self.executable, arguments)
        guard let status = await wrk.waitForExit(timeout: .seconds(seconds + 60)) else {
            wrk.signal(SIGKILL)
            throw BenchFailure("wrk did not finish within \(seconds + 60) s")
        }
        let cpu = try meter.stop()
        let reaped = (ProcStat.read(getpid()).map { $0.cutime + $0.cstime } ?? 0) - reapedBefore
        let output = wrk.output
        try? FileManager.default.removeItem(atPath: wrk.outputPath)
        guard status == 0, let line = output.split(separator: "\n").first(where: { $0.hasPrefix("herald-wrk ") }),
              let json = try JSONSerialization.jsonObject(with: Data(line.dropFirst("herald-wrk ".count).utf8)) as? [String: Int] else {
            throw BenchFailure("wrk exited \(status) without its summary: \(output.suffix(1500))")
        }
        let value = { (key: String) in json[key] ?? 0 }
        return Result(requests: value("requests"), seconds: Double(value("duration_us")) / 1e6,
                      p50: Double(value("p50_us")) / 1000, p99: Double(value("p99_us")) / 1000,
                      failed: value("status") + value("connect") + value("read") + value("write") + value("timeout"),
                      cpu: cpu, client: Double(reaped) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    static var executable: String {
        ["/usr/bin/wrk", "/usr/local/bin/wrk"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/wrk"
    }

    static var installed: Bool { FileManager.default.isExecutableFile(atPath: executable) }

    /// The length of every start id (`ab12345678-01-00000042`), so that the bare route answers
    /// the same bytes as herald-api.
    static let startIDLength = 22

    /// wrk's Lua (LuaJIT): arguments kind, prefix, seeded, threads, rate, authorization.
    /// Each thread has its own Lua state; `setup` numbers them. Paced (rate > 0): `delay()` runs
    /// before each request of a connection and books the thread's next slot on a fixed schedule
    /// (CLOCK_MONOTONIC through LuaJIT's FFI), so the thread sends rate/threads a second whatever
    /// the latency; a connection behind its slot goes at once. wrk times a request from its
    /// write, after the delay. `done` prints the summary as one JSON line.
    static let script = #"""
    local ffi = require("ffi")
    ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } herald_timespec;
    int clock_gettime(int clock, herald_timespec *tp);
    ]]
    local clock = ffi.new("herald_timespec")
    local function now_ms()
      ffi.C.clock_gettime(1, clock)
      return tonumber(clock.tv_sec) * 1000 + tonumber(clock.tv_nsec) / 1e6
    end

    local lanes = 0
    function setup(thread)
      thread:set("lane", lanes)
      lanes = lanes + 1
    end

    local kind, prefix, seeded, threads, interval, next_slot
    local n = 0
    function init(args)
      kind, prefix, seeded, threads = args[1], args[2], tonumber(args[3]), tonumber(args[4])
      local rate = tonumber(args[5])
      wrk.method = "POST"
      wrk.headers["Content-Type"] = "application/json"
      if args[6] ~= "" then wrk.headers["Authorization"] = args[6] end
      -- Defined only when paced: wrk looks for delay() after init, and calls it before every request.
      if rate > 0 then
        interval = 1000 * threads / rate
        delay = function()
          local now = now_ms()
          if next_slot == nil then next_slot = now + interval * lane / threads end
          local slot = next_slot
          next_slot = next_slot + interval
          if slot <= now then return 0 end
          return math.floor(slot - now)
        end
      end
    end

    function request()
      local i = n
      n = n + 1
      if kind == "start" then
        local id = string.format("%s-%02d-%08d", prefix, lane, i)
        local number = string.format("+4917%09d", ((lane * 100000000 + i) * 7919) % 1000000000)
        return wrk.format(nil, "/v1/sms/verifications", nil,
          '{"verification_id":"' .. id .. '","phone_number":"' .. number .. '","purpose":"sign_in","locale":"en"}')
      end
      local index = (lane + i * threads) % seeded
      return wrk.format(nil, "/v1/sms/verifications/" .. prefix .. "-" .. index .. "/check", nil, '{"code":"000000"}')
    end

    function done(summary, latency, requests)
      local e = summary.errors
      io.write(string.format('herald-wrk {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,'
        .. '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\n',
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
        e.connect, e.read, e.write, e.status, e.timeout))
    end
    """#
}
