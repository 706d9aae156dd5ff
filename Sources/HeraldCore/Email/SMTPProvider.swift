import Foundation

/// Delivers through an SMTP server (``SMTPClient``, connections pooled and reused).
struct SMTPProvider: EmailProvider {
    let client: SMTPClient
    var name: String { "smtp" }

    func send(_ message: EmailMessage, context: EmailSendContext) async -> EmailProviderAnswer {
        switch await client.send(message, logger: context.logger) {
        case .accepted: .accepted(providerMessageID: message.messageID)
        case .rejected(let code): .rejected(code: code)
        case .transient(let code): .transient(code: code)
        case .timeout: .timeout
        }
    }
}
