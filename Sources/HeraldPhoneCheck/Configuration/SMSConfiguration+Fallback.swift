import Foundation
import HeraldRuntime
import HeraldWire

extension SMSConfiguration {
    /// `sms.fallback.*`: the channels a verification tries in turn (docs/fallback.md). The next
    /// one goes out when the providers of one refuse or are down, when a receipt says
    /// undelivered, or when no `delivered` came within the channel's `after_seconds`.
    public struct Fallback: Sendable, Equatable {
        public typealias Channel = SMSVerificationJob.Channel

        /// The list of a verification whose job names none, in a region without its own.
        public var channels: [Channel] = [.sms]
        /// Region (ISO 3166, upper case) → its list.
        public var regions: [String: [Channel]] = [:]
        /// Channel → seconds without a `delivered` receipt before the next channel; 0: never by time.
        public var afterSeconds: [Channel: Int] = [.sms: 60, .whatsapp: 60, .voice: 0]
        /// The sends of one code a provider may charge for (its first, its resends, each channel
        /// of its fallback): a fallback past it ends, refused `rate_limited:paid_sends`.
        public var maxPaidSends = 2

        /// The list for a number of `region` (nil: a test number, no region).
        public func channels(region: String?) -> [Channel] {
            region.flatMap { regions[$0] } ?? channels
        }

        /// Seconds to wait for `channel`'s `delivered`, nil when it is never waited for.
        public func wait(_ channel: Channel) -> Int? {
            afterSeconds[channel].flatMap { $0 > 0 ? $0 : nil }
        }

        /// Every wait in use: the broker's wait queues (`<namespace>.sms.wait.<seconds>s`).
        public var waits: [Int] { Set(Channel.allCases.compactMap(wait)).sorted() }

        static func read(_ source: ConfigSource) throws -> Fallback {
            var f = Fallback()
            f.channels = try list(source, "sms.fallback.channels", default: f.channels)
            for (region, _) in source.map("sms.fallback.regions") {
                guard region.range(of: #"^[A-Z]{2}$"#, options: .regularExpression) != nil else {
                    throw ConfigError(key: "sms.fallback.regions.\(region)", reason: "must be an ISO 3166 region code in upper case (IN, BR)")
                }
                f.regions[region] = try list(source, "sms.fallback.regions.\(region)", default: [])
            }
            f.maxPaidSends = try source.int("sms.fallback.max_paid_sends", default: f.maxPaidSends, range: 1...10)
            for channel in Channel.allCases {
                f.afterSeconds[channel] = try source.int("sms.fallback.after_seconds.\(channel.rawValue)", default: f.afterSeconds[channel] ?? 0,
                                                         range: 0...3600)
            }
            return f
        }

        /// A non-empty list of distinct channels.
        static func list(_ source: ConfigSource, _ key: String, default fallback: [Channel]) throws -> [Channel] {
            let names = try source.stringList(key, default: fallback.map(\.rawValue))
            let channels = try names.enumerated().map { index, name in
                guard let channel = Channel(rawValue: name) else {
                    throw ConfigError(key: "\(key)[\(index)]", reason: "'\(name)' is not one of \(Channel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return channel
            }
            guard !channels.isEmpty, Set(channels).count == channels.count else {
                throw ConfigError(key: key, reason: "must name one or more channels, each once")
            }
            return channels
        }

        /// Each channel listed is configured (`sms.whatsapp`, `sms.voice`).
        func check(whatsapp: Bool, voice: Bool) throws(ConfigError) {
            for (key, list) in [("sms.fallback.channels", channels)] + regions.sorted(by: { $0.key < $1.key }).map({ ("sms.fallback.regions.\($0.key)", $0.value) }) {
                if list.contains(.whatsapp), !whatsapp { throw ConfigError(key: key, reason: "lists whatsapp, and sms.whatsapp is not configured") }
                if list.contains(.voice), !voice { throw ConfigError(key: key, reason: "lists voice, and sms.voice has no provider configured (from, webhook_url)") }
            }
        }

        public var effectiveValues: [String: Any] {
            var values: [String: Any] = ["sms.fallback.channels": channels.map(\.rawValue),
                                         "sms.fallback.regions": regions.mapValues { $0.map(\.rawValue) },
                                         "sms.fallback.max_paid_sends": maxPaidSends]
            for (channel, seconds) in afterSeconds { values["sms.fallback.after_seconds.\(channel.rawValue)"] = seconds }
            return values
        }
    }
}
