import Foundation
import Testing
@testable import HeraldCleanup
@testable import HeraldRuntime

/// `cleanup.pace.*`: the pauses a worker chooses from its batches' durations.
@Suite struct CleanupPaceTests {
    @Test func theBusyShareSetsThePauseAfterEachBatch() {
        let half = CleanupPace(maxBusyPercent: 50, targetBatchMilliseconds: 0)
        #expect(half.pause(after: .milliseconds(40)) == .milliseconds(40))
        let quarter = CleanupPace(maxBusyPercent: 25, targetBatchMilliseconds: 0)
        #expect(quarter.pause(after: .milliseconds(40)) == .milliseconds(120))
        #expect(quarter.pause(after: .milliseconds(10)) == .milliseconds(30), "a cheaper batch, a shorter pause")
        #expect(quarter.pause(after: .zero) == .zero)
        #expect(CleanupPace.off.pause(after: .seconds(3)) == .zero)
        #expect(CleanupPace(maxBusyPercent: 100, targetBatchMilliseconds: 0).pause(after: .milliseconds(500)) == .zero)
    }

    @Test func aBatchSlowerThanTheTargetShrinksTheShareInProportion() {
        let pace = CleanupPace(maxBusyPercent: 50, targetBatchMilliseconds: 100)
        // At or under the target: the configured share.
        #expect(pace.share(after: .milliseconds(80)) == 0.5)
        #expect(pace.pause(after: .milliseconds(100)) == .milliseconds(100))
        // Twice the target: half the share (25 %), so three times the batch as pause.
        #expect(pace.share(after: .milliseconds(200)) == 0.25)
        #expect(pace.pause(after: .milliseconds(200)) == .milliseconds(600))
        // The target alone (no busy limit) pauses only batches over it.
        let targetOnly = CleanupPace(maxBusyPercent: 100, targetBatchMilliseconds: 50)
        #expect(targetOnly.pause(after: .milliseconds(40)) == .zero)
        #expect(targetOnly.pause(after: .milliseconds(100)) == .milliseconds(100))
    }

    @Test func noPauseIsLongerThanTheCap() {
        let pace = CleanupPace(maxBusyPercent: 1, targetBatchMilliseconds: 0, maxPauseMilliseconds: 2_000)
        #expect(pace.pause(after: .milliseconds(100)) == .seconds(2))
        #expect(pace.pause(after: .milliseconds(10)) == .milliseconds(990))
    }

    @Test func thePacerOwesTheLastBatchsPauseAndSumsWhatItTook() async throws {
        var pacer = CleanupPacer(pace: CleanupPace(maxBusyPercent: 50, targetBatchMilliseconds: 0))
        #expect(try await pacer.pauseIfOwed() == .zero, "nothing owed before the first batch")
        #expect(pacer.took(.milliseconds(4)) == .milliseconds(4))
        #expect(pacer.took(.milliseconds(6)) == .milliseconds(6), "only the last batch's pause is owed")
        #expect(try await pacer.pauseIfOwed() == .milliseconds(6))
        #expect(try await pacer.pauseIfOwed() == .zero, "a pause is taken once")
        #expect(pacer.paused == .milliseconds(6) && pacer.batches == 2)
    }

    @Test func paceKeysParseWithDefaultsAndABadValueNamesItsKey() throws {
        let defaults = try HeraldConfiguration(every: ConfigSource(values: [:])).cleanup.pace
        #expect(defaults == CleanupPace())
        #expect(!defaults.isOff, "the default favours live traffic")
        let source = ConfigSource(values: ["cleanup.pace.max_busy_percent": 30, "cleanup.pace.max_pause_ms": 500],
                                  environment: ["HERALD_CLEANUP_PACE_TARGET_BATCH_MS": "0"])
        let pace = try HeraldConfiguration(every: source).cleanup.pace
        #expect(pace == CleanupPace(maxBusyPercent: 30, targetBatchMilliseconds: 0, maxPauseMilliseconds: 500))
        #expect(source.unknownKeys().isEmpty)
        for (key, value) in [("cleanup.pace.max_busy_percent", 0), ("cleanup.pace.max_busy_percent", 101),
                             ("cleanup.pace.target_batch_ms", -1), ("cleanup.pace.max_pause_ms", 60_000)] {
            let error = #expect(throws: ConfigError.self) { try HeraldConfiguration(every: ConfigSource(values: [key: value])) }
            #expect(error?.description.contains(key) == true, "\(key) = \(value)")
        }
        #expect(try HeraldConfiguration(every: ConfigSource(values: [:])).cleanup.effectiveValues["cleanup.pace.max_busy_percent"] as? Int == 50)
    }
}
