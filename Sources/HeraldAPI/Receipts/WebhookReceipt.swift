import Foundation
import HeraldRuntime
import HeraldWire

/// A receipt of the webhook provider, signed as Herald signs its requests to it (Standard
/// Webhooks, `sms.webhook.secret`): `{"type": "sms.status", "data": {"message_id", "status",
/// "error_code"?, "occurred_at"?}}`, `status` one of queued, sent, delivered, undelivered.
/// Pure: the unit tests run it (ReceiptUnitTests).
enum WebhookReceipt {
    static func receipt(_ body: [UInt8], receivedAt: Date = Date()) throws -> SMSReceiptJob {
        let fields = try JSONFields.parse(Data(body), allowed: ["type", "timestamp", "data"])
        guard try fields.required("type", maxLength: 32) == "sms.status" else {
            throw APIFailure.invalid(field: "type", reason: "type must be sms.status")
        }
        guard let data = try fields.object("data", allowed: ["message_id", "status", "error_code", "occurred_at"]) else {
            throw APIFailure.invalid(field: "data", reason: "data is required")
        }
        let job = SMSReceiptJob(
            provider: .webhook, providerMessageID: try data.required("message_id", maxLength: 128),
            status: try data.requiredChoice("status", DeliveryStatus.self), errorCode: try data.string("error_code", maxLength: 64),
            occurredAt: try data.string("occurred_at", maxLength: 40).map { text in
                guard let date = Date(rfc3339: text) else { throw APIFailure.invalid(field: "data.occurred_at", reason: "data.occurred_at must be an RFC 3339 time") }
                return date
            },
            receivedAt: receivedAt)
        return try JSONFields.validated(job)
    }
}
