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
    /// The job types a queue of this job carries, each decoded and validated as itself: the
    /// job alone, or the members of a family (``HeraldJobFamily``).
    static var memberTypes: [any HeraldJob.Type] { get }
    /// A decoded member as this job (itself, or a family's case); nil for another type.
    static func wrap(_ member: any HeraldJob) -> Self?
}

extension HeraldJob {
    /// The AMQP `type` property: `sms.verification.v1`.
    public static var typeName: String { "\(name).v\(version)" }
    public static var memberTypes: [any HeraldJob.Type] { [Self.self] }
    public static func wrap(_ member: any HeraldJob) -> Self? { member as? Self }
}

/// The jobs of a queue that carries more than one type (`herald.apple`: `apple.token`,
/// `apple.revoke`, …): its handler's `Job` is an enum over them. The decoder picks the member
/// by the AMQP `type` property, decodes and validates it as that type, and ``wrap(_:)``s it.
/// `name` and `version` name the family (metrics of a body that names no member).
public protocol HeraldJobFamily: HeraldJob {
    /// The member job types, each with its own routing key, type name and schema.
    static var members: [any HeraldJob.Type] { get }
    /// The member this case carries.
    var member: any HeraldJob { get }
}

extension HeraldJobFamily {
    public static var memberTypes: [any HeraldJob.Type] { members }
    public func validate() throws(JobValidationError) { try member.validate() }
    public func encode(to encoder: any Encoder) throws { try member.encode(to: encoder) }
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a job family is decoded by its member's type"))
    }
}

/// Why a job body was refused. `reason` is safe to log and to put in a dead-letter header:
/// it names fields, never their values.
public struct JobValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
