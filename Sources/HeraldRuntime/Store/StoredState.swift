import NIOCore
import PostgresNIO

/// A state or status kept in a `text` column with a `CHECK (… IN (…))`: a Swift enum whose
/// cases are exactly the column's values, bound and decoded as itself.
public protocol StoredState: RawRepresentable<String>, CaseIterable, Sendable, Equatable, PostgresNonThrowingEncodable, PostgresDecodable {}

extension StoredState {
    public static var psqlType: PostgresDataType { String.psqlType }
    public static var psqlFormat: PostgresFormat { String.psqlFormat }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        rawValue.encode(into: &byteBuffer, context: context)
    }
}
