import Foundation

/// `account.deleted` v1 on `herald.events`: an account cleanup (or the front API, through
/// ``AccountStore/deleteAccount(id:eventsExchange:)``) deleted, so other services can delete the
/// user's data. Written to the event outbox in the transaction that deletes the account. The body is built by hand (one per deleted account, a million in a big run) in the
/// shape ``OutgoingEvent`` gives every event: sorted keys, `version`, `event`, `occurred_at`.
public struct AccountDeletedEvent: Sendable, Equatable {
    public static let name = "account.deleted"
    /// Why it was deleted: cleanup deleted an expired anonymous account.
    public static let expiredAnonymous = "anonymous_expired"
    /// Why it was deleted: the front API deleted it (the user asked).
    public static let deleted = "deleted"

    public var accountID: String
    public var createdAt: Date
    public var deletedAt: Date
    /// The cleanup run that deleted it; nil for any other deletion (no `run_id` in the body).
    public var runID: String?
    public var reason: String = Self.expiredAnonymous

    public init(accountID: String, createdAt: Date, deletedAt: Date, runID: String?, reason: String = Self.expiredAnonymous) {
        self.accountID = accountID
        self.createdAt = createdAt
        self.deletedAt = deletedAt
        self.runID = runID
        self.reason = reason
    }

    public var outgoing: OutgoingEvent {
        let deleted = Self.timestamp(deletedAt)
        let body = "{\"account_id\":\(Self.quoted(accountID)),\"created_at\":\"\(Self.timestamp(createdAt))\",\"deleted_at\":\"\(deleted)\","
            + "\"event\":\"\(Self.name)\",\"occurred_at\":\"\(deleted)\",\"reason\":\(Self.quoted(reason)),"
            + (runID.map { "\"run_id\":\(Self.quoted($0))," } ?? "") + "\"version\":1}"
        return OutgoingEvent(name: Self.name, messageID: RandomID.uuid(), body: Array(body.utf8))
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp(_ date: Date) -> String { iso8601.format(date) }
    private static let iso8601 = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
