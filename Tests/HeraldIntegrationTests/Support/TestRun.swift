import Foundation
import Testing

/// Whether this test process runs as `make test` runs it (`scripts/test.sh`): the servers it
/// started, `HERALD_TEST_BIN_DIR` and the parallelism bound. A plain `swift test` has neither:
/// the suites that need servers skip themselves (``Trait/needsServers``) and
/// ``TestRunCheck`` says in one line what to run instead, rather than dozens of failures.
enum TestRun {
    static let env = ProcessInfo.processInfo.environment

    /// `scripts/test.sh` sets both; without the bound, Swift Testing starts every test at
    /// once and 2 cores see 10 to 30 failures (docs/testing.md).
    static var prepared: Bool {
        env["HERALD_TEST_BIN_DIR"] != nil && env["SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH"] != nil
    }

    /// `scripts/test.sh`'s disruptive phase, which runs the suites that restart or stop the
    /// shared servers alone.
    static var disruptive: Bool { env["HERALD_TEST_DISRUPTIVE"] == "1" }

    static let instead = "the integration tests need the servers and settings of `make test`: run `make test` (docs/testing.md), not a plain `swift test`"
    /// Each skipped suite's reason (a plain run prints it once per test: kept short).
    static let skipped = "needs `make test`"
}

/// What ``TestRunCheck`` throws: its description is the line a plain `swift test` shows.
struct RunMakeTestInstead: Error, CustomStringConvertible {
    var description: String { TestRun.instead }
}

extension Trait where Self == ConditionTrait {
    /// A suite against the real RabbitMQ and PostgreSQL: run under `make test` only.
    static var needsServers: Self { .enabled(if: TestRun.prepared, Comment(rawValue: TestRun.skipped)) }

    /// A suite that restarts or stops the shared servers: `make test`'s disruptive phase only
    /// (`HERALD_TEST_DISRUPTIVE=1`), never beside other tests.
    static var disruptive: Self {
        .enabled(if: TestRun.disruptive, "restarts or stops the servers: `make test`'s disruptive phase only")
    }
}

/// The one test a plain `swift test` fails, with the line that says what to run instead.
@Suite struct TestRunCheck {
    @Test func runByMakeTest() throws {
        guard TestRun.prepared else { throw RunMakeTestInstead() }
    }
}
