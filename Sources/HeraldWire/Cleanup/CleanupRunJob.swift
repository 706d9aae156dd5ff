import Foundation
import HeraldRuntime

/// `cleanup.run` v1: start (or join) a cleanup run of expired anonymous accounts.
public struct CleanupRunJob: HeraldJob, Equatable {
    public static let kind = JobKind.cleanup
    public static let name = "cleanup.run"
    public static let version = 1

    public var version: Int
    public var runID: String
    public var dryRun: Bool?

    public init(runID: String, dryRun: Bool = false) {
        self.version = Self.version
        self.runID = runID
        self.dryRun = dryRun
    }

    enum CodingKeys: String, CodingKey { case version, runID = "run_id", dryRun = "dry_run" }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(runID, field: "run_id")
    }
}
