import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging

extension PhoneHandler {
    /// `sms.receipt`: the provider's word on a message it accepted, applied to its send attempt.
    /// A receipt may come before the send's own commit (the provider answered, the worker has not
    /// recorded it yet): it is retried through the delay queues (`runner.retry_delays_ms`), and
    /// dropped with `herald_sms_receipts_total{result="unmatched"}` on its last attempt.
    /// An undelivered receipt of a verification's current send starts its next channel, if it has
    /// one (docs/fallback.md).
    /// `sms.delivered` / `sms.undelivered` go out when the attempt reaches that status, once per
    /// attempt: another receipt of the same final status (Kannel's type 2 after 16) emits nothing;
    /// only the job that set it, run again (a crash between the status's commit and the job's),
    /// emits it again, with the same event message id, for consumers to deduplicate.
    func receipt(_ receipt: SMSReceiptJob, context: JobContext) async throws -> JobOutcome {
        var logger = context.logger
        logger[metadataKey: "provider"] = "\(receipt.provider.rawValue)"
        logger[metadataKey: "provider_message_id"] = "\(receipt.providerMessageID)"
        let result = try await PhoneStore.applyReceipt(receipt, jobID: context.envelope.messageID, maxAge: .seconds(receiptMaxAgeSeconds),
                                                     client: context.database, logger: logger)
        let provider = receipt.provider.rawValue
        switch result.kind {
        case .unknown:
            guard context.attempt >= receiptAttempts else { throw JobFailure.transient("receipt_before_send") }
            metrics.receipt(provider: provider, status: receipt.status, result: "unmatched")
            logger.notice("a receipt for a message no send attempt has: dropped", metadata: ["attempts": "\(context.attempt)"])
            return .completed()
        case .stale:
            metrics.receipt(provider: provider, status: receipt.status, result: "stale")
            logger.debug("a receipt older than the attempt's status: ignored", metadata: ["status": "\(result.status?.rawValue ?? "")"])
            return .completed()
        case .duplicate, .applied:
            metrics.receipt(provider: provider, status: receipt.status, result: result.kind.rawValue)
            guard let status = result.status, status.isFinal, result.sameJob, let id = result.verificationID else { return .completed() }
            let region = result.phone.map(PhoneNumberClassifier.metricRegion(of:)) ?? "ZZ"
            if result.kind == .applied { metrics.delivery(provider: provider, region: region, status: status) }
            var event = OutgoingEvent(name: "sms.\(status.rawValue)", payload: SMSDeliveryEvent(
                verificationID: id, phone: result.phone.map(Redact.phone) ?? "", provider: provider,
                providerMessageID: receipt.providerMessageID, status: status.rawValue, errorCode: result.errorCode, region: region),
                occurredAt: receipt.statusTime)
            // The same id whenever this job emits it: a repeat is the same event.
            event.messageID = "evt-" + context.envelope.messageID
            guard status == .undelivered else { return .completed(events: [event]) }
            // Undelivered: the verification's next channel at once, if it has one and this was
            // its current send (with the job's outcome: a stop before it commits loses neither).
            let (messageID, exchange) = (receipt.providerMessageID, topology.jobsExchange)
            return .completed(events: [event]) { connection, logger in
                try await PhoneStore.fallbackOnUndelivered(id, providerMessageID: messageID, exchange: exchange, on: connection, logger: logger)
            }
        }
    }
}

/// Payload of `sms.delivered` and `sms.undelivered` (the number masked).
struct SMSDeliveryEvent: Encodable {
    var verificationID: String
    var phone: String
    var provider: String
    var providerMessageID: String
    var status: String
    var errorCode: String?
    var region: String

    enum CodingKeys: String, CodingKey {
        case phone, provider, status, region
        case verificationID = "verification_id", providerMessageID = "provider_message_id", errorCode = "error_code"
    }
}
