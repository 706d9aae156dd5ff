import Foundation
import HeraldPhone
import HeraldRuntime
import HeraldWire
import Logging

/// Delivery receipts (issue 35): the SMS job of ``smsEndToEnd`` first, its provider naming each
/// SMS, then one `sms.receipt` (`delivered`) per SMS sent, published as herald-api publishes
/// them and applied by the real PhoneHandler (`herald.sms_receipt_apply`: the attempt found by its
/// provider message id across the table's days, its status moved on, `sms.delivered` emitted):
/// receipts applied per second and the CPU per receipt, next to the SMS jobs' figures.
func smsReceipts(count: Int, configuration: HeraldConfiguration, logger: Logger) async throws -> [BenchResult] {
    let prefix = "rb-" + RandomID.hex().prefix(12)
    let sms = try await smsEndToEnd(count: count, workers: 1, messageIDs: prefix, configuration: configuration, logger: logger)
    var receiving = configuration
    // Every receipt names an attempt that is there: none waits in the delay queues.
    receiving.sms.providers = [.outbox]
    let next = Counter()
    let receipts = try await workersEndToEnd(
        count: count, workers: 1, configuration: receiving, logger: logger,
        name: "sms.receipt applied (delivered), 1 worker",
        makeHandler: { TimedHandler(inner: try PhoneHandler(configuration: receiving), watch: $0) },
        job: { _ in SMSReceiptJob(provider: .webhook, providerMessageID: "\(prefix)-\(next.next())", status: .delivered) })
    return [sms, receipts]
}
