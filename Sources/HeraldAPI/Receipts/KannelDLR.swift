import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire

/// A Kannel delivery report: the `dlr-url` herald-sms gave the message
/// (``SMSConfiguration/Receipts/kannelURL(id:now:)``) with Kannel's escapes filled in: `id`, `exp`
/// and `sig` (Herald's name for the message, the end of its validity, their signature), `type`
/// (`%d`, bits: 1 delivered, 2 undelivered, 4 queued on the SMSC, 8 accepted by the SMSC,
/// 16 refused by the SMSC), `ts` (`%T`, Unix seconds) and `reply` (`%A`: the SMSC's words, an
/// SMPP receipt's `id:… stat:UNDELIV err:…` for one). Pure: the unit tests run it (ReceiptUnitTests).
enum KannelDLR {
    static let accepted: Set<String> = ["id", "exp", "sig", "type", "ts", "reply"]

    /// The status a DLR type's bits say, the final ones first; nil for none of the five bits
    /// (a type this version of Kannel does not document: taken and ignored).
    static func status(type: Int) -> DeliveryStatus? {
        if type & 1 != 0 { return .delivered }
        if type & (2 | 16) != 0 { return .undelivered }
        if type & 8 != 0 { return .sent }
        if type & 4 != 0 { return .queued }
        return nil
    }

    /// The id, after its signature and validity are checked.
    static func signedID(_ fields: FormFields, secret: String, now: Date = Date()) throws -> String {
        let id = try fields.required("id", maxLength: 128)
        guard let expires = try fields.int("exp", range: 0...Int(Int32.max)), let signature = try fields.string("sig", maxLength: 128),
              SMSConfiguration.Receipts.kannelSignatureHolds(id: id, expires: expires, signature: signature, secret: secret),
              TimeInterval(expires) >= now.timeIntervalSince1970 else {
            throw APIFailure.forgedCallback
        }
        return id
    }

    /// The receipt, or nil for a type none of whose bits Herald reads.
    static func receipt(_ fields: FormFields, id: String, receivedAt: Date = Date()) throws -> SMSReceiptJob? {
        guard let text = try fields.string("type", maxLength: 4), let type = Int(text), (0...255).contains(type) else {
            throw APIFailure.invalid(field: "type", reason: "a DLR type: a number from 0 to 255")
        }
        guard let status = status(type: type) else { return nil }
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
        return status(type: type) == .undelivered ? "kannel-\(type)" : nil
    }
}
