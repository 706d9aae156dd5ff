import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

/// The Services and Verifications of the Twilio Verify routes (`herald.verify_*`). The codes
/// are not here: each send attempt is a Herald SMS verification (herald-sms makes and sends the
/// code; the check goes through ``PhoneVerifier``).
public struct VerifyStore: Sendable {
    public let client: PostgresClient

    public init(client: PostgresClient) { self.client = client }

    // MARK: Services

    public func createService(_ settings: VerifyService.Settings, logger: Logger) async throws -> VerifyService {
        let sid = "VA" + RandomID.hex()
        try await client.query("""
            INSERT INTO herald.verify_services (sid, friendly_name, code_length, ttl_seconds, max_send_attempts, max_check_attempts,
                                               skip_sms_to_landlines, do_not_share_warning)
            VALUES (\(sid), \(settings.friendlyName), \(settings.codeLength), \(settings.ttlSeconds), \(settings.maxSendAttempts),
                    \(settings.maxCheckAttempts), \(settings.skipSMSToLandlines), \(settings.doNotShareWarning))
            """, logger: logger)
        guard let service = try await service(sid, logger: logger) else { throw StoreError("service \(sid) not found after insert") }
        return service
    }

    public func service(_ sid: String, logger: Logger) async throws -> VerifyService? {
        try await services(where: "sid = $1", [sid], logger: logger).first
    }

    /// A page of Services, oldest first.
    public func services(page: Int, pageSize: Int, logger: Logger) async throws -> [VerifyService] {
        try await services(where: "true ORDER BY created_at, sid LIMIT $1 OFFSET $2", [pageSize, page * pageSize], logger: logger)
    }

    /// Writes every setting of `settings` over the Service's. Nil when there is no such Service.
    public func updateService(_ sid: String, _ settings: VerifyService.Settings, logger: Logger) async throws -> VerifyService? {
        let rows = try await client.query("""
            UPDATE herald.verify_services
               SET friendly_name = \(settings.friendlyName), code_length = \(settings.codeLength), ttl_seconds = \(settings.ttlSeconds),
                   max_send_attempts = \(settings.maxSendAttempts), max_check_attempts = \(settings.maxCheckAttempts),
                   skip_sms_to_landlines = \(settings.skipSMSToLandlines), do_not_share_warning = \(settings.doNotShareWarning), updated_at = now()
             WHERE sid = \(sid) RETURNING sid
            """, logger: logger)
        for try await _ in rows.decode(String.self) { return try await service(sid, logger: logger) }
        return nil
    }

    /// Deletes the Service and its verifications. False when there is no such Service.
    public func deleteService(_ sid: String, logger: Logger) async throws -> Bool {
        let rows = try await client.query("DELETE FROM herald.verify_services WHERE sid = \(sid) RETURNING sid", logger: logger)
        for try await _ in rows.decode(String.self) { return true }
        return false
    }

    private func services(where condition: String, _ binds: [any PostgresEncodable & Sendable], logger: Logger) async throws -> [VerifyService] {
        var bindings = PostgresBindings()
        for bind in binds { try bindings.append(bind) }
        let query = PostgresQuery(unsafeSQL: """
            SELECT sid, friendly_name, code_length, ttl_seconds, max_send_attempts, max_check_attempts, skip_sms_to_landlines,
                   do_not_share_warning, created_at, updated_at
              FROM herald.verify_services WHERE \(condition)
            """, binds: bindings)
        let rows = try await client.query(query, logger: logger)
        var out: [VerifyService] = []
        for try await r in rows.decode((String, String, Int, Int, Int, Int, Bool, Bool, Date, Date).self) {
            out.append(VerifyService(sid: r.0, friendlyName: r.1, codeLength: r.2, ttlSeconds: r.3, maxSendAttempts: r.4, maxCheckAttempts: r.5,
                                     skipSMSToLandlines: r.6, doNotShareWarning: r.7, createdAt: r.8, updatedAt: r.9))
        }
        return out
    }
}

extension VerifyService {
    /// The Service's settings, to change some and write them back.
    public var settings: Settings {
        var s = Settings(friendlyName: friendlyName)
        s.codeLength = codeLength
        s.ttlSeconds = ttlSeconds
        s.maxSendAttempts = maxSendAttempts
        s.maxCheckAttempts = maxCheckAttempts
        s.skipSMSToLandlines = skipSMSToLandlines
        s.doNotShareWarning = doNotShareWarning
        return s
    }
}
