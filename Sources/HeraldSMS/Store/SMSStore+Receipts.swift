import Foundation
import HeraldRuntime
import Logging
import PostgresNIO

extension SMSStore {
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
    }

    /// Applies a provider's receipt to the accepted send attempt it names
    /// (`functions/sms_receipt_apply.sql`): a status later than the attempt's, or nothing.
    public static func applyReceipt(_ receipt: SMSReceiptJob, client: PostgresClient, logger: Logger) async throws -> ReceiptResult {
        let rows = try await client.query("""
            SELECT o_result, o_verification_id, o_phone, o_status, o_error_code FROM herald.sms_receipt_apply(
                \(receipt.provider.rawValue), \(receipt.providerMessageID), \(receipt.status.rawValue), \(receipt.statusTime), \(receipt.errorCode))
            """, logger: logger)
        for try await (kind, id, phone, status, code) in rows.decode((String, String?, String?, String?, String?).self) {
            guard let kind = ReceiptResult.Kind(rawValue: kind) else { throw StoreError("herald.sms_receipt_apply answered \(kind)") }
            return ReceiptResult(kind: kind, verificationID: id, phone: phone, status: status.flatMap(DeliveryStatus.init(rawValue:)), errorCode: code)
        }
        throw StoreError("herald.sms_receipt_apply gave no row")
    }
}
