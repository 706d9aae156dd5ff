import AMQP
import Foundation

/// Turns a delivery into a validated job, or a reason to dead-letter it.
/// Checks, in order: size, `message_id`, `type`, content type, UTF-8, JSON object, the
/// schema (missing fields, types), `version`, then the job's own rules.
public struct JobDecoder<Job: HeraldJob>: Sendable {
    public var maxBytes: Int
    /// The member jobs by AMQP type, named once: every delivery is checked against them.
    private let members: [Member]

    private struct Member: Sendable {
        var type: String
        var name: String
        var job: any HeraldJob.Type
    }

    public init(maxBytes: Int) {
        self.maxBytes = maxBytes
        members = Job.memberTypes.map { Member(type: $0.typeName, name: $0.name, job: $0) }
    }

    /// `bodySize` is the declared size when the body was not kept (defaults to `body.count`).
    public func decode(body: [UInt8], bodySize: Int? = nil, properties: AMQPProperties) -> Result<(JobEnvelope, Job), JobValidationError> {
        do {
            let envelope = try envelope(bodyCount: bodySize ?? body.count, properties: properties)
            return .success((envelope, try payload(body, type: envelope.typeName)))
        } catch {
            return .failure(error)
        }
    }

    /// The envelope checks alone; also used when the payload cannot be decoded, to name the job.
    public func envelope(bodyCount: Int, properties: AMQPProperties) throws(JobValidationError) -> JobEnvelope {
        guard bodyCount <= maxBytes else {
            throw JobValidationError("body of \(bodyCount) bytes exceeds runner.max_message_bytes (\(maxBytes))")
        }
        guard let messageID = properties.messageID, !messageID.isEmpty else {
            throw JobValidationError("the message_id property is missing; it is the idempotency key")
        }
        try JobEnvelope.checkMessageID(messageID)
        var expected: String { members.map(\.type).joined(separator: " or ") }
        guard let type = properties.type, !type.isEmpty else {
            throw JobValidationError("the type property is missing; expected \(expected)")
        }
        guard members.contains(where: { $0.type == type }) else {
            let shown = JobEnvelope.printable(type)
            if members.contains(where: { type.hasPrefix($0.name + ".v") }) {
                throw JobValidationError("unsupported version '\(shown)'; this worker reads \(expected)")
            }
            throw JobValidationError("unknown job type '\(shown)' for this queue; expected \(expected)")
        }
        if let contentType = properties.contentType, !contentType.isEmpty,
           !contentType.lowercased().hasPrefix("application/json") {
            // The reason names the property, not its value (docs/wire-contract.md).
            throw JobValidationError("content_type must be application/json")
        }
        return JobEnvelope(messageID: messageID, typeName: type, correlationID: properties.correlationID, timestamp: properties.timestamp,
                           replyTo: properties.replyTo.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// The body as the job (for a family: as its first member; see ``payload(_:type:)``).
    public func payload(_ body: [UInt8]) throws(JobValidationError) -> Job {
        try payload(body, type: members[0].type)
    }

    /// The body as the member job of AMQP type `type` (one the envelope check accepted).
    public func payload(_ body: [UInt8], type: String) throws(JobValidationError) -> Job {
        try decodeMember(body, type: type).get()
    }

    private func decodeMember(_ body: [UInt8], type: String) -> Result<Job, JobValidationError> {
        guard let member = members.first(where: { $0.type == type })?.job else {
            return .failure(JobValidationError("unknown job type '\(JobEnvelope.printable(type))' for this queue"))
        }
        let decoded: any HeraldJob
        do {
            decoded = try Self.member(body, as: member)
        } catch {
            return .failure(error)
        }
        guard let job = Job.wrap(decoded) else {
            return .failure(JobValidationError("job type '\(JobEnvelope.printable(type))' is not read by this queue"))
        }
        return .success(job)
    }

    private static func member<Member: HeraldJob>(_ body: [UInt8], as _: Member.Type) throws(JobValidationError) -> Member {
        guard String(validating: body, as: UTF8.self) != nil else {
            throw JobValidationError("body is not valid UTF-8")
        }
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }), first == UInt8(ascii: "{") else {
            throw JobValidationError("body must be a JSON object")
        }
        // One parse: the job and its `version` are read from the same decoder.
        let versioned: Versioned<Member>
        do {
            versioned = try JSONDecoder().decode(Versioned<Member>.self, from: Data(body))
        } catch let error as DecodingError {
            throw JobValidationError(DecodingReason.of(error))
        } catch {
            throw JobValidationError("body is not valid JSON")
        }
        guard versioned.version == Member.version else {
            throw JobValidationError("field 'version' must be \(Member.version)")
        }
        try versioned.job.validate()
        return versioned.job
    }

    /// A job and the body's `version` (nil when absent or not an integer: refused after the
    /// job's own fields, as before).
    private struct Versioned<Member: Decodable>: Decodable {
        var job: Member
        var version: Int?

        private enum Keys: String, CodingKey { case version }

        init(from decoder: any Decoder) throws {
            job = try Member(from: decoder)
            version = try? decoder.container(keyedBy: Keys.self).decodeIfPresent(Int.self, forKey: .version)
        }
    }
}
