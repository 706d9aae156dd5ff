import Foundation
import HeraldRuntime
import HeraldWire
import Logging
import PostgresNIO

extension PhoneStore {
    /// What ``applyReceipt(_:client:logger:)`` did.
    public struct ReceiptResult: Sendable, Equatable {
        /// `herald.sms_receipt_apply`'s answer.
        public enum Kind: String, Sendable { case applied, duplicate, stale, unknown }
        public var kind: Kind
        public var verificationID: String?
        public var phone: String?
        /// The attempt's delivery status and error code after the receipt.
        public var status: DeliveryStatus?
        public var errorCode: String?
        /// The status was set by this very job (applied now, or by an earlier run of it).
        public var sameJob: Bool
    }

    /// Applies a provider's receipt (the job `jobID`) to the accepted send attempt it names
    /// (`functions/sms_receipt_apply.sql`): a status later than the attempt's, or nothing. Only
    /// attempts made in the `maxAge` before the receipt came (and an hour after: clocks) are
    /// searched, so only those days' partitions are.
    public static func applyReceipt(_ receipt: SMSReceiptJob, jobID: String, maxAge: Duration, client: PostgresClient,
                                    logger: Logger) async throws -> ReceiptResult {
        let received = receipt.receivedTime
        let (since, until) = (received.addingTimeInterval(-Double(maxAge.components.seconds)), received.addingTimeInterval(3600))
        let apply = ReceiptApply(provider: receipt.provider.rawValue, providerMessageID: receipt.providerMessageID, status: receipt.status.rawValue,
                                 statusTime: receipt.statusTime, errorCode: receipt.errorCode, jobID: jobID, since: since, until: until)
        guard let row = try await apply.first(on: client, logger: logger) else { throw StoreError("herald.sms_receipt_apply gave no row") }
        guard let kind = ReceiptResult.Kind(rawValue: row.result) else { throw StoreError("herald.sms_receipt_apply answered \(row.result)") }
        return ReceiptResult(kind: kind, verificationID: row.verificationID, phone: row.phone, status: row.status.flatMap(DeliveryStatus.init(rawValue:)),
                             errorCode: row.errorCode, sameJob: row.sameJob)
    }
}
