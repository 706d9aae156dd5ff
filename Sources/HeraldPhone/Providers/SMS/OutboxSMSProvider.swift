import Foundation
import HeraldRuntime
import HeraldWire

/// The dev SMS provider (``DevOutboxDelivery``): the message in `herald.dev_outbox` with the
/// code masked, in full in `sms.jsonl` of `outbox.directory` (how a dev run reads its codes).
struct OutboxSMSProvider: DeliveryProvider {
    let outbox: DevOutboxDelivery
    var name: String { "outbox" }

    func send(_ message: PhoneMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        let entry = DevOutbox.Entry(
            kind: JobKind.sms.rawValue, messageID: message.messageID, jobType: SMSVerificationJob.typeName,
            recipient: Redact.phone(message.to),
            body: DevOutboxDelivery.body(["text": message.maskedText, "encoding": message.encoding.scheme.rawValue, "segments": message.encoding.segments]))
        return await outbox.deliver(entry, spooled: ["to": message.to, "text": message.text.revealed, "verification_id": message.verificationID], context: context)
    }
}
