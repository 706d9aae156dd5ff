import Foundation
import HeraldRuntime

/// How `heraldctl verify show-*` prints one record: JSON as it is, or text with one
/// `key: value` line per field, then one line per entry of each list (`call: …`, `code: …`).
func printRecord(_ record: [String: Any], json: Bool, lists: [String: String] = [:]) {
    if json {
        printJSON(record)
        return
    }
    for key in record.keys.sorted() where lists[key] == nil { print("\(key): \(record[key]!)") }
    for (key, label) in lists.sorted(by: { $0.key < $1.key }) {
        for entry in record[key] as? [[String: Any]] ?? [] {
            print("\(label): " + entry.keys.sorted().map { "\($0)=\(entry[$0]!)" }.joined(separator: " "))
        }
    }
}
