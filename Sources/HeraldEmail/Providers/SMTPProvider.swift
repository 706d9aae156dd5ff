import Foundation
import HeraldRuntime

/// Delivers through an SMTP server (``SMTPClient``, connections pooled and reused).
struct SMTPProvider: DeliveryProvider {
    let client: SMTPClient
    var name: String { "smtp" }

    func send(_ message: EmailMessage, context: DeliveryContext) async -> ProviderAnswer<NoDetail> {
        switch await client.send(message, logger: context.logger) {
        case .accepted: .accepted(message.messageID)
        case .rejected(let code): .refused(code)
        case .transient(let code): .next(code)
        case .timeout: .timeout
        }
    }
}
