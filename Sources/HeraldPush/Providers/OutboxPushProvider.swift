import Foundation
import HeraldPushCheck
import HeraldRuntime
import HeraldWire

/// The dev push provider (``DevOutboxDelivery``): the push in `herald.dev_outbox` without its
/// secret, in full in `push.jsonl` of `outbox.directory` (the stand-in device a dev run or a
/// demo reads its secrets from).
struct OutboxPushProvider: DeliveryProvider {
    let outbox: DevOutboxDelivery
    let payloadKey: String
    var name: String { "outbox" }

    func send(_ message: PushMessage, context: DeliveryContext) async -> ProviderAnswer<InvalidToken> {
        let entry = DevOutbox.Entry(
            kind: JobKind.push.rawValue, messageID: message.messageID, jobType: PushVerificationJob.typeName,
            recipient: PushTokens.hint(message.deviceToken),
            body: DevOutboxDelivery.body(["receipt": message.receipt, "platform": message.platform.rawValue,
                                          "environment": message.environment.rawValue, "app_id": message.appID]))
        let payload = String(decoding: APNsProvider.payload(message, key: payloadKey), as: UTF8.self)
        return await outbox.deliver(entry, spooled: ["device_token": message.deviceToken, "platform": message.platform.rawValue,
                                                     "receipt": message.receipt, "payload": payload], context: context)
    }
}
