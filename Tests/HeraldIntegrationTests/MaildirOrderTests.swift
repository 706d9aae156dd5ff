import Foundation
import HeraldStubs
import Testing

/// The test SMTP server's messages come back in the order they were stored, whatever the width of
/// the microseconds in Python's maildir names.
@Suite struct MaildirOrderTests {
    @Test func messagesComeBackOldestFirst() throws {
        let maildir = FileManager.default.temporaryDirectory.appendingPathComponent("maildir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: maildir + "/new", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: maildir) }
        // As mailbox.Maildir names them: <seconds>.M<microseconds>P<pid>Q<count>.<host>, stored in this order.
        let stored = ["1764037528.M999999P7Q1.host", "1764037529.M99999P7Q2.host", "1764037529.M100000P7Q3.host",
                      "1764037529.M100000P7Q12.host", "1764037530.M5P7Q13.host"]
        for name in stored.shuffled() { try Data().write(to: URL(fileURLWithPath: maildir + "/new/" + name)) }
        #expect(MaildirMessage.files(in: maildir) == stored.map { maildir + "/new/" + $0 })
    }
}
