import AMQP
import Foundation

/// Turns a delivery into a validated job, or a reason to dead-letter it.
/// Checks, in order: size, `message_id`, `type`, content type, UTF-8, JSON object, the
/// schema (missing fields, types), `version`, then the job's own rules.
public struct JobDecoder<Job: HeraldJob>: Sendable {
    public var maxBytes: Int

    public init(maxBytes: Int) { self.maxBytes = maxBytes }

    /// `bodySize` is the declared size when the body was not kept (defaults to `body.count`).
    public func decode(body: [UInt8], bodySize: Int? = nil, properties: AMQPProperties) -> Result<(JobEnvelope, Job), JobValidationError> {
        do {
            let envelope = try envelope(bodyCount: bodySize ?? body.count, properties: properties)
            return .success((envelope, try payload(body)))
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
        guard let type = properties.type, !type.isEmpty else {
            throw JobValidationError("the type property is missing; expected \(Job.typeName)")
        }
        guard type == Job.typeName else {
            let shown = JobEnvelope.printable(type)
            if type.hasPrefix(Job.name + ".v") {
                throw JobValidationError("unsupported version '\(shown)'; this worker reads \(Job.typeName)")
            }
            throw JobValidationError("unknown job type '\(shown)' for this queue; expected \(Job.typeName)")
        }
        if let contentType = properties.contentType, !contentType.isEmpty,
           !contentType.lowercased().hasPrefix("application/json") {
            // The reason names the property, not its value (docs/wire-contract.md).
            throw JobValidationError("content_type must be application/json")
        }
        return JobEnvelope(messageID: messageID, typeName: type, correlationID: properties.correlationID, timestamp: properties.timestamp)
    }

    public func payload(_ body: [UInt8]) throws(JobValidationError) -> Job {
        guard String(validating: body, as: UTF8.self) != nil else {
            throw JobValidationError("body is not valid UTF-8")
        }
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }), first == UInt8(ascii: "{") else {
            throw JobValidationError("body must be a JSON object")
        }
        let job: Job
        do {
            job = try JSONDecoder().decode(Job.self, from: Data(body))
        } catch let error as DecodingError {
            throw JobValidationError(Self.reason(error))
        } catch {
            throw JobValidationError("body is not valid JSON")
        }
        let version = (try? JSONDecoder().decode(VersionProbe.self, from: Data(body)))?.version
        guard version == Job.version else {
            throw JobValidationError("field 'version' must be \(Job.version)")
        }
        try job.validate()
        return job
    }

    private struct VersionProbe: Decodable { var version: Int }

    static func reason(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ last: (any CodingKey)? = nil) -> String {
            var keys = context.codingPath
            if let last { keys.append(last) }
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing required field '\(path(context, key))'"
        case .typeMismatch(let type, let context):
            return "field '\(path(context))' has the wrong type (expected \(typeName(type)))"
        case .valueNotFound(let type, let context):
            return "field '\(path(context))' must not be null (expected \(typeName(type)))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "body is not valid JSON" : "field '\(path(context))' has an invalid value"
        @unknown default:
            return "body does not match the schema"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Bool.Type: "boolean"
        case is Int.Type, is Double.Type: "number"
        default: "object"
        }
    }

}
