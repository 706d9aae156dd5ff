import Foundation
import HeraldRuntime

/// How `heraldctl verify show-*` prints one record: JSON as it is, or text with one
/// `key: value` line per field, then one line per entry of each list (`call: …`, `code: …`).
func printRecord(_ record: [String: Any], json: Bool, lists: [String: String] = [:]) {
    if json {
        printJSON(record)
        return
    }
    for key in record.keys.sorted() where lists[key] == nil { print("\(key): \(plain(record[key]!))") }
    for (key, label) in lists.sorted(by: { $0.key < $1.key }) {
        for entry in record[key] as? [[String: Any]] ?? [] {
            print("\(label): " + plain(entry))
        }
    }
}

/// A value as `heraldctl` prints it: an object as `key=value` pairs, a list comma-separated.
private func plain(_ value: Any) -> String {
    switch value {
    case let object as [String: Any]: object.keys.sorted().map { "\($0)=\(plain(object[$0]!))" }.joined(separator: " ")
    case let list as [Any]: list.map(plain).joined(separator: ",")
    default: "\(value)"
    }
}

/// How `heraldctl verify sms|email-link|email-code|push` print a check: JSON with the subject,
/// `result` and the fields; or the result's name, then `key=value` per field, sorted.
func printCheck(_ subject: [String: Any], result name: String, fields: [String: Any], json: Bool) {
    if json {
        printJSON(subject.merging(["result": name]) { a, _ in a }.merging(fields) { a, _ in a })
    } else {
        print(([name] + fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " "))
    }
}
