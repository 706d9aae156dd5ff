/// The kind of line a number belongs to, as libphonenumber's metadata says from its range.
/// What SMS pumping exploits: premium-rate, shared-cost and small-carrier ranges whose
/// termination fees the attacker shares. The raw values are the configuration's names
/// (`sms.number_types.allow`) and the refusal reasons' (`number_type_not_allowed:premium_rate`).
public enum PhoneNumberType: String, Sendable, Hashable, CaseIterable {
    case mobile
    case fixedLine = "fixed_line"
    /// Ranges shared by both (the North American plan: +1 numbers are all this or special).
    case fixedLineOrMobile = "fixed_line_or_mobile"
    case tollFree = "toll_free"
    case premiumRate = "premium_rate"
    case sharedCost = "shared_cost"
    case voip
    case personalNumber = "personal_number"
    case pager
    /// Universal access ("company") numbers.
    case uan
    case voicemail
    /// Valid for its region but in no range of a known type.
    case unknown
}
