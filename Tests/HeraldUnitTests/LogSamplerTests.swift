import Testing
@testable import HeraldRuntime

/// ``LogSampler``: the first `burst` lines of a window go through, the rest are counted, and
/// the first line of a later window says how many were left out.
@Suite struct LogSamplerTests {
    @Test func aFloodIsCutToItsBurstAndTheNextLineCountsWhatWasLeftOut() {
        let start = ContinuousClock.now
        let sampler = LogSampler(burst: 3, interval: .seconds(10), now: start)
        let first = (0..<8).map { sampler.admit(at: start + .milliseconds($0)) }
        #expect(first == [0, 0, 0, nil, nil, nil, nil, nil])
        // Still the same window: left out too.
        #expect(sampler.admit(at: start + .seconds(9)) == nil)
        // A new window: this line goes through and tells of the six left out, then the count starts again.
        #expect(sampler.admit(at: start + .seconds(10)) == 6)
        #expect(sampler.admit(at: start + .seconds(11)) == 0)
        #expect(sampler.admit(at: start + .seconds(12)) == 0)
        #expect(sampler.admit(at: start + .seconds(13)) == nil)
        #expect(sampler.admit(at: start + .seconds(25)) == 1)
    }

    @Test func aQuietStreamLosesNothing() {
        let start = ContinuousClock.now
        let sampler = LogSampler(burst: 20, interval: .seconds(10), now: start)
        for second in 0..<100 { #expect(sampler.admit(at: start + .seconds(second)) == 0) }
    }
}
