/// What one provider call means for the chain.
public enum ProviderDisposition: Sendable, Equatable {
    /// The provider took the message; its id for it, if it gave one.
    case accepted(providerMessageID: String?)
    /// Refused for good (the recipient or the message is the problem, not the provider): no
    /// other provider is tried and the job is not retried.
    case refused(code: String)
    /// The provider failed (5xx, 429, our credentials refused, unreachable, no answer in
    /// time): try the next one, and retry the job later when every one failed.
    case next(code: String)
}

/// A provider's answer to one call: its disposition, whether the message may have been
/// delivered although the call did not say so (an "uncertain send": a timeout after the
/// request was written), the HTTP status where there is one, and a channel's own detail
/// (push: why a device token is dead).
public struct ProviderAnswer<Detail: Sendable & Equatable>: Sendable, Equatable {
    public var disposition: ProviderDisposition
    public var uncertain: Bool
    public var httpStatus: Int?
    public var detail: Detail?

    public init(_ disposition: ProviderDisposition, uncertain: Bool = false, httpStatus: Int? = nil, detail: Detail? = nil) {
        self.disposition = disposition
        self.uncertain = uncertain
        self.httpStatus = httpStatus
        self.detail = detail
    }

    public static func accepted(_ id: String?, httpStatus: Int? = nil) -> Self { Self(.accepted(providerMessageID: id), httpStatus: httpStatus) }
    public static func refused(_ code: String, httpStatus: Int? = nil, detail: Detail? = nil) -> Self { Self(.refused(code: code), httpStatus: httpStatus, detail: detail) }
    public static func next(_ code: String, httpStatus: Int? = nil) -> Self { Self(.next(code: code), httpStatus: httpStatus) }
    /// No answer in time: the provider may have sent it.
    public static var timeout: Self { Self(.next(code: "timeout"), uncertain: true) }
}

/// The detail of a channel whose answers carry none.
public struct NoDetail: Sendable, Equatable {}
