import AMQP
import Foundation
@testable import HeraldPhone
@testable import HeraldRuntime
@testable import HeraldWire
import Testing

/// Bodies far over `runner.max_message_bytes` against a real `herald-sms` process: refused
/// from their content header, drained without being kept, dead-lettered with the reason,
/// while the worker's memory stays flat and the next valid job still runs.
@Suite(.needsServers) struct OversizeBodyTests {
    /// 16 MiB: 256 × the default `runner.max_message_bytes` (64 KiB), under the broker's own
    /// `max_message_size` (32 MiB, scripts/services.sh and deploy/rabbitmq/rabbitmq.conf).
    static let bodyBytes = 16 << 20
    static let count = 4

    @Test func bodiesManyTimesTheLimitAreDeadLetteredUnbufferedAndTheWorkerStaysFlat() async throws {
        try await withHarness() { harness in
            let worker = try WorkerProcess("herald-sms", namespace: harness.namespace)
            try await worker.waitUntilReady()
            // One job first, so the worker's steady-state memory (pools, caches) is in the baseline.
            let warmUp = try await harness.enqueue(harness.sms(1))
            try await eventually("the warm-up job completed") { try await harness.ledger(warmUp)?.0 == "completed" }
            let before = try MemoryStatus(pid: worker.child.pid)
            try MemoryStatus.resetPeak(pid: worker.child.pid)

            var oversizeIDs: [String] = []
            for n in 0..<Self.count {
                let id = "oversize-\(n)-\(UUID().uuidString.prefix(8))"
                oversizeIDs.append(id)
                // Valid JSON of a real job padded far past the limit: only its size is wrong.
                let body = Array(#"{"version":1,"pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: Self.bodyBytes) + Array(#""}"#.utf8)
                try await harness.client.publishRaw(body: body, routingKey: "sms.verification",
                                                    properties: JobEnvelope(messageID: id, typeName: SMSVerificationJob.typeName).properties())
            }
            let next = try await harness.enqueue(harness.sms(2))

            try await eventually(timeout: .seconds(60), "the valid job after the oversize ones completed") { try await harness.ledger(next)?.0 == "completed" }
            try await eventually(timeout: .seconds(60), "every oversize body dead-lettered") {
                try await harness.depth(harness.topology.deadLetterQueue(.sms)) == Self.count
            }
            let after = try MemoryStatus(pid: worker.child.pid)

            let letters = try await harness.drainDeadLetters(.sms)
            #expect(Set(letters.compactMap(\.properties.messageID)) == Set(oversizeIDs))
            let declared = Self.bodyBytes + 22
            for letter in letters {
                #expect(letter.properties.deadLetterStamp?.reason
                        == ("body of \(declared) bytes exceeds runner.max_message_bytes (65536)"))
                #expect(letter.properties.deadLetterStamp?.category == "invalid")
                #expect(letter.body.count == 0, "the body was kept and passed on")
            }
            #expect(try await harness.outboxCount([next]) == 1)
            #expect(try await harness.depth(harness.topology.workQueue(.sms)) == 0)
            #expect(worker.child.isRunning)

            // A buffered body alone would add its 16 MiB to the peak; allow a quarter of one.
            let growth = after.peakKiB - before.residentKiB
            print("OversizeBodyTests: \(Self.count) bodies of \(declared) bytes; worker VmRSS before \(before.residentKiB) KiB, "
                  + "after \(after.residentKiB) KiB, peak (VmHWM since reset) \(after.peakKiB) KiB, peak growth \(growth) KiB")
            #expect(growth < (Self.bodyBytes / 4) / 1024, "the worker's peak RSS grew by \(growth) KiB")
            worker.signal(SIGTERM)
            #expect(await worker.waitForExit(timeout: .seconds(20)) == 0)
        }
    }
}

/// VmRSS and VmHWM of a process, from /proc/PID/status.
struct MemoryStatus {
    var residentKiB: Int
    var peakKiB: Int

    init(pid: pid_t) throws {
        let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) throws -> Int {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
                  let value = Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
            else { throw TestFailure("no \(name) in /proc/\(pid)/status") }
            return value
        }
        residentKiB = try field("VmRSS")
        peakKiB = try field("VmHWM")
    }

    /// Resets VmHWM to the current RSS (`echo 5 > /proc/PID/clear_refs`, Linux ≥ 4.0).
    static func resetPeak(pid: pid_t) throws {
        try "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)
    }
}
