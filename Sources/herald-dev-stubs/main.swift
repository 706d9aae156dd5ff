import Foundation
import HeraldStubs

// herald-dev-stubs: the stand-ins of remote services Herald's local runs cannot reach, as
// processes (make run's WhatsApp, scripts/test-api.sh's WhatsApp and Twilio for Twilio's own
// Python library). Each runs until killed, writes its base URL to DIR/url, the settings Herald
// needs for it to DIR/env (`export HERALD_…=…` lines), and every message it takes to
// DIR/messages.jsonl (one JSON object per line: the stand-in phone; dev only, it holds codes).
//   whatsapp DIR WEBHOOK_URL  WhatsApp's Cloud API; statuses sent, delivered, read posted,
//                             signed, to WEBHOOK_URL (herald-api's /v1/receipts/whatsapp)
//   twilio DIR [AUTH_TOKEN]   Twilio's Messages and Calls APIs (the account's auth token: the key of
//                             its signatures); statuses posted, signed, to each message's and
//                             call's StatusCallback
// Not for deployments.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("herald-dev-stubs: \(message)\n".utf8))
    exit(1)
}

/// Writes `url`, `env`, then appends each new message `taken()` returns to messages.jsonl, forever.
func serve(_ directory: String, url: String, env: [(String, String)], taken: @Sendable () -> [[String: Any]]) async throws -> Never {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let log = (directory as NSString).appendingPathComponent("messages.jsonl")
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let lines = env.map { "export \($0.0)=\($0.1)" }.joined(separator: "\n") + "\n"
    try lines.write(toFile: (directory as NSString).appendingPathComponent("env"), atomically: true, encoding: .utf8)
    // Last: the URL says the stand-in is ready.
    try url.write(toFile: (directory as NSString).appendingPathComponent("url"), atomically: true, encoding: .utf8)
    guard let handle = FileHandle(forWritingAtPath: log) else { fail("cannot write \(log)") }
    var written = 0
    while true {
        let all = taken()
        for message in all.dropFirst(written) {
            let data = try JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])
            handle.seekToEndOfFile()
            handle.write(data + Data("\n".utf8))
        }
        written = all.count
        try await Task.sleep(for: .milliseconds(100))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "whatsapp" where arguments.count == 3:
    let stub = try await WhatsAppStubServer()
    stub.script([.init("sent"), .init("delivered"), .init("read")])
    stub.webhook(arguments[2])
    try await serve(arguments[1], url: stub.baseURL, env: [
        ("HERALD_SMS_WHATSAPP_BASE_URL", stub.baseURL), ("HERALD_SMS_WHATSAPP_PHONE_NUMBER_ID", stub.phoneNumberID),
        ("HERALD_SMS_WHATSAPP_ACCESS_TOKEN", stub.accessToken), ("HERALD_SMS_WHATSAPP_TEMPLATE", stub.template),
        ("HERALD_SMS_WHATSAPP_APP_SECRET", stub.appSecret),
    ]) {
        stub.messages.map { ["channel": "whatsapp", "id": $0.id, "to": $0.to, "language": $0.language, "code": $0.code] }
    }

case "twilio" where (2...3).contains(arguments.count):
    let stub = arguments.count == 3 ? try await TwilioStubServer(authToken: arguments[2]) : try await TwilioStubServer()
    try await serve(arguments[1], url: stub.baseURL, env: [
        ("HERALD_SMS_TWILIO_BASE_URL", stub.baseURL), ("HERALD_SMS_TWILIO_ACCOUNT_SID", stub.accountSID),
        ("HERALD_SMS_TWILIO_AUTH_TOKEN", stub.authToken),
    ]) {
        stub.messages.map { ["channel": "sms", "sid": $0.sid, "to": $0.to, "text": $0.body] }
            + stub.calls.calls.map { call in ["channel": "voice", "sid": call.sid, "to": call.to, "text": call.says.map(\.text).joined(separator: " / ")] }
    }

default:
    fail("usage: herald-dev-stubs whatsapp DIR WEBHOOK_URL | twilio DIR [AUTH_TOKEN]")
}
