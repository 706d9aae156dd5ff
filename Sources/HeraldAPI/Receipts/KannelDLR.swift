import Foundation
import HeraldRuntime
import HeraldSMS

/// A Kannel delivery report: the `dlr-url` herald-sms gave the message
/// (``SMSConfiguration/Receipts/kannelURL(id:)``) with Kannel's escapes filled in: `id` and
/// `sig` (Herald's name for the message and its signature), `type` (`%d`: 1 delivered,
/// 2 undelivered, 4 queued on the SMSC, 8 accepted by the SMSC, 16 refused by the SMSC), `ts`
/// (`%T`, Unix seconds) and `reply` (`%A`: the SMSC's words, an SMPP receipt's
/// `id:… stat:UNDELIV err:…` for one). Pure, for the fuzz target and the unit tests.
enum KannelDLR {
    static let accepted: Set<String> = ["id", "sig", "type", "ts", "reply"]

    static func status(type: Int) -> DeliveryStatus? {
        switch type {
        case 1: .delivered
        case 2, 16: .undelivered
        case 4: .queued
        case 8: .sent
        default: nil
        }
    }

    /// The id, after its signature is checked.
    static func signedID(_ fields: FormFields, secret: String) throws -> String {
        let id = try fields.required("id", maxLength: 128)
        guard let signature = try fields.string("sig", maxLength: 128),
              SMSConfiguration.Receipts.kannelSignatureHolds(id: id, signature: signature, secret: secret) else {
            throw APIFailure.forgedCallback
        }
        return id
    }

    static func receipt(_ fields: FormFields, id: String, receivedAt: Date = Date()) throws -> SMSReceiptJob {
        guard let text = try fields.string("type", maxLength: 2), let type = Int(text), let status = status(type: type) else {
            throw APIFailure.invalid(field: "type", reason: "a DLR type: 1, 2, 4, 8 or 16")
        }
        let occurred = try fields.int("ts", range: 0...Int(Int32.max)).map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let reply = try fields.string("reply", maxLength: 512) ?? ""
        let job = SMSReceiptJob(provider: .kannel, providerMessageID: id, status: status, providerStatus: String(type),
                                errorCode: errorCode(type: type, reply: reply), occurredAt: occurred, receivedAt: receivedAt)
        return try JSONFields.validated(job)
    }

    /// An SMPP receipt's `err:` field (`smpp-err-<3 characters>`), else `kannel-<type>` for a
    /// failure that gives none.
    static func errorCode(type: Int, reply: String) -> String? {
        if let range = reply.range(of: "err:") {
            let code = reply[range.upperBound...].prefix { $0.isASCII && ($0.isLetter || $0.isNumber) }.prefix(3)
            if !code.isEmpty, code != "000" { return "smpp-err-\(code.lowercased())" }
        }
        return type == 2 || type == 16 ? "kannel-\(type)" : nil
    }
}
