import Foundation
import HeraldStubs
import NIOConcurrencyHelpers

/// The mail server the fleet sends through: the real SMTP server the local services run
/// (`scripts/smtp-server.py`, aiosmtpd), over STARTTLS with AUTH. It counts the messages it
/// stored per job (read from its maildir: the load addresses each email job's message to
/// `<message id>@example.com`), keeps the link codes the users got (for the secrecy search),
/// and is switched to 451 or a hang for the outage through its mode file.
final class MailGateway: Sendable {
    enum Mode: String, Sendable {
        case normal
        /// Every recipient refused with 451 (transient).
        case refusing = "fail451"
        /// Every recipient answered only once the mode changes.
        case hanging = "hang"
    }

    private struct State {
        var read: Set<String> = []
        var ours: [String] = []
        var accepted: [String: Int] = [:]
        var codes: [String: String] = [:]
    }

    private let state = NIOLockedValueBox(State())
    let maildir: String
    let modeFile: String
    let environment: [String: String]
    private static let domain = "@example.com"
    /// The load's message ids start with it: messages of other runs and of the tests are skipped.
    private let idPrefix: String

    init(environment: [String: String], idPrefix: String) throws {
        self.idPrefix = idPrefix
        let required = { (name: String) in try environment[name].orThrow("\(name) is not set: run through scripts/chaos.sh (the local services' environment)") }
        maildir = try required("HERALD_DEV_SMTP_MAILDIR")
        modeFile = try required("HERALD_DEV_SMTP_MODE_FILE")
        self.environment = [
            "HERALD_EMAIL_PROVIDERS": "smtp",
            "HERALD_EMAIL_SMTP_HOST": try required("HERALD_DEV_SMTP_HOST"),
            "HERALD_EMAIL_SMTP_PORT": try required("HERALD_DEV_SMTP_PORT"),
            "HERALD_EMAIL_SMTP_TLS": "starttls",
            "HERALD_EMAIL_SMTP_CA_FILE": try required("HERALD_DEV_SMTP_CA"),
            "HERALD_EMAIL_SMTP_USERNAME": try required("HERALD_DEV_SMTP_USERNAME"),
            "HERALD_EMAIL_SMTP_PASSWORD_FILE": try required("HERALD_DEV_SMTP_PASSWORD_FILE"),
        ]
        try set(.normal)
    }

    /// The recipient of an email job's message: its message id is the local part.
    static func address(for id: String) -> String { id + domain }

    func set(_ mode: Mode) throws {
        try Data((mode.rawValue + "\n").utf8).write(to: URL(fileURLWithPath: modeFile), options: .atomic)
    }

    /// Messages stored per job so far (reads the files stored since the last call).
    var accepted: [String: Int] {
        refresh()
        return state.withLockedValue { $0.accepted }
    }

    /// The link code (`oobCode`) each job's message carried.
    var codes: [String: String] {
        refresh()
        return state.withLockedValue { $0.codes }
    }

    private func refresh() {
        let read = state.withLockedValue { $0.read }
        var found: [(path: String, id: String?, code: String?)] = []
        for path in MaildirMessage.files(in: maildir) where !read.contains(path) {
            guard let raw = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let recipient = MaildirMessage.envelopeRecipient(raw) ?? ""
            guard recipient.hasSuffix(Self.domain), recipient.hasPrefix(idPrefix) else {
                found.append((path, nil, nil))
                continue
            }
            found.append((path, String(recipient.dropLast(Self.domain.count)), MaildirMessage.parse(raw)?.query("oobCode")))
        }
        state.withLockedValue { s in
            for message in found {
                s.read.insert(message.path)
                guard let id = message.id else { continue }
                s.ours.append(message.path)
                s.accepted[id, default: 0] += 1
                if let code = message.code { s.codes[id] = code }
            }
        }
    }

    /// Back to normal, and this run's messages removed (the tests read the same maildir).
    func close() {
        try? set(.normal)
        refresh()
        for path in state.withLockedValue({ $0.ours }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
