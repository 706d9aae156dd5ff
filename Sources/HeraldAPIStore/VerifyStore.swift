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
        try await ServiceInsert(sid: sid, friendlyName: settings.friendlyName, codeLength: settings.codeLength, ttlSeconds: settings.ttlSeconds,
                                maxSendAttempts: settings.maxSendAttempts, maxCheckAttempts: settings.maxCheckAttempts,
                                skipSMSToLandlines: settings.skipSMSToLandlines, doNotShareWarning: settings.doNotShareWarning)
            .rows(on: client, logger: logger)
        guard let service = try await service(sid, logger: logger) else { throw StoreError("service \(sid) not found after insert") }
        return service
    }

    public func service(_ sid: String, logger: Logger) async throws -> VerifyService? {
        try await ServiceFind(sid: sid).first(on: client, logger: logger).map(VerifyService.init)
    }

    /// Page `page` of Services, `pageSize` to a page, oldest first, and whether a page follows.
    public func services(page: Int, pageSize: Int, logger: Logger) async throws -> (services: [VerifyService], more: Bool) {
        // One more than the page: whether it exists tells of the next page.
        let rows = try await ServicesPage(limit: pageSize + 1, offset: page * pageSize).rows(on: client, logger: logger)
        return (rows.prefix(pageSize).map(VerifyService.init), rows.count > pageSize)
    }

    /// Writes every setting of `settings` over the Service's. Nil when there is no such Service.
    public func updateService(_ sid: String, _ settings: VerifyService.Settings, logger: Logger) async throws -> VerifyService? {
        let update = ServiceUpdate(sid: sid, friendlyName: settings.friendlyName, codeLength: settings.codeLength, ttlSeconds: settings.ttlSeconds,
                                   maxSendAttempts: settings.maxSendAttempts, maxCheckAttempts: settings.maxCheckAttempts,
                                   skipSMSToLandlines: settings.skipSMSToLandlines, doNotShareWarning: settings.doNotShareWarning)
        guard try await update.first(on: client, logger: logger) != nil else { return nil }
        return try await service(sid, logger: logger)
    }

    /// Deletes the Service and its verifications. False when there is no such Service.
    public func deleteService(_ sid: String, logger: Logger) async throws -> Bool {
        try await ServiceDelete(sid: sid).first(on: client, logger: logger) != nil
    }
}

/// The columns of a Service as its statements read them (`service_find.sql`, `services_page.sql`).
protocol VerifyServiceColumns {
    var sid: String { get }
    var friendlyName: String { get }
    var codeLength: Int { get }
    var ttlSeconds: Int { get }
    var maxSendAttempts: Int { get }
    var maxCheckAttempts: Int { get }
    var skipSMSToLandlines: Bool { get }
    var doNotShareWarning: Bool { get }
    var createdAt: Date { get }
    var updatedAt: Date { get }
}

extension ServiceFind.Row: VerifyServiceColumns {}
extension ServicesPage.Row: VerifyServiceColumns {}

extension VerifyService {
    init(_ r: some VerifyServiceColumns) {
        self.init(sid: r.sid, friendlyName: r.friendlyName, codeLength: r.codeLength, ttlSeconds: r.ttlSeconds, maxSendAttempts: r.maxSendAttempts,
                  maxCheckAttempts: r.maxCheckAttempts, skipSMSToLandlines: r.skipSMSToLandlines, doNotShareWarning: r.doNotShareWarning,
                  createdAt: r.createdAt, updatedAt: r.updatedAt)
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
