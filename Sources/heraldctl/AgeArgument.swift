import ArgumentParser
import Foundation

/// A duration on the command line: `90s`, `15m`, `2h`, `7d` (a bare number is seconds).
struct AgeArgument: ExpressibleByArgument, Sendable, Equatable {
    let seconds: TimeInterval

    init(seconds: TimeInterval) { self.seconds = seconds }

    init?(argument: String) {
        let text = argument.trimmingCharacters(in: .whitespaces).lowercased()
        guard let unit = text.last else { return nil }
        let factors: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let (number, factor) = unit.isNumber ? (text, 1.0) : (String(text.dropLast()), factors[unit] ?? 0)
        guard factor > 0, let value = Double(number), value >= 0, value.isFinite else { return nil }
        seconds = value * factor
    }

    static var defaultValueDescription: String { "e.g. 90s, 15m, 2h, 7d" }
}

/// `4m03s`, `2h05m`, `3d04h`: an age as an operator reads it.
func formatAge(_ seconds: TimeInterval) -> String {
    let s = max(0, Int(seconds.rounded(.down)))
    switch s {
    case ..<60: return "\(s)s"
    case ..<3600: return String(format: "%dm%02ds", s / 60, s % 60)
    case ..<86400: return String(format: "%dh%02dm", s / 3600, s % 3600 / 60)
    default: return String(format: "%dd%02dh", s / 86400, s % 86400 / 3600)
    }
}
