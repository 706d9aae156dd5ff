import Foundation

/// A job payload of the wire contract: JSON, snake_case, with a `version` field.
/// Unknown fields are ignored; missing required fields and wrong types are rejected.
public protocol HeraldJob: Codable, Sendable {
    /// The worker kind that consumes this job.
    static var kind: JobKind { get }
    /// The routing key on exchange `herald`, e.g. `sms.verification`.
    static var name: String { get }
    /// The payload version this code writes and reads.
    static var version: Int { get }
    /// Checks what the type system cannot (formats, ranges); throws a reason.
    func validate() throws(JobValidationError)
}

extension HeraldJob {
    /// The AMQP `type` property: `sms.verification.v1`.
    public static var typeName: String { "\(name).v\(version)" }
}

/// Why a job body was refused. `reason` is safe to log and to put in a dead-letter header:
/// it names fields, never their values.
public struct JobValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
