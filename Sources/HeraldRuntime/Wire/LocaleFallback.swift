/// How a channel with templates (SMS, email) reads a job's `locale`: lower-cased, `_` read as
/// `-`, and tried from the most specific tag to `default`: `pt_BR` → `pt-br`, `pt`, `default`.
public enum LocaleFallback {
    /// `pt_BR` → `pt-br`: the form template files are keyed by.
    public static func normalize(_ locale: String) -> String {
        String(locale.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// The locales tried for `locale`, most specific first, `default` last (alone for none).
    public static func chain(_ locale: String?) -> [String] {
        var parts = locale.map { normalize($0).split(separator: "-").map(String.init) } ?? []
        var out: [String] = []
        while !parts.isEmpty {
            out.append(parts.joined(separator: "-"))
            parts.removeLast()
        }
        return out + ["default"]
    }
}
