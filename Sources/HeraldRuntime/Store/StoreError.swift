/// A store found what its SQL should never produce (no decision, a row gone, unreadable
/// settings): a defect, not an outage, so nothing waits for the database to come back.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
