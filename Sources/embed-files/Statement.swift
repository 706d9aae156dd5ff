import Foundation

/// One statement file, `SQL/queries/NAME.sql`, read from its header (sqlc's `-- name:` is the
/// model): the comment lines before the statement, of which
///
///     -- name: FallbackTake
///     -- param verificationID: text
///     -- param paused: text?
///     -- column decision: text
///     -- column reason: text?
///     -- column status: text as SMSCodeStatus
///
/// name the Swift type, its parameters (`$1`, `$2`, … in order) and its row's columns (in the
/// select list's order); `?` allows NULL; `as T` carries the value as the module's type T.
/// `-- params NAME: GROUP` is one Swift value bound as several parameters in a row
/// (``ParameterGroup``: `-- params attempts: DeliveryAttempts`, the six arrays of provider calls).
/// The other comment lines are the type's documentation.
/// `scripts/check-statements.py` prepares every file on a migrated database and fails when the
/// types PostgreSQL infers are not these.
struct Statement {
    struct Field {
        var name: String
        var type: PostgresType
        var optional: Bool
        /// `text as SMSCodeStatus`: a Swift type of the module that postgres-nio encodes and
        /// decodes as the column's type (a typed state), in place of the type's own.
        var swiftType: String?

        /// A member of a parameter group: the group's property, bound as `group.name`.
        var group: String?

        var swift: String { (swiftType ?? type.swift) + (optional ? "?" : "") }
        var wire: String { (swiftType ?? type.wire) + (optional ? "?" : "") }
        func encoded() -> String {
            let value = group.map { "\($0).\(name)" } ?? name
            return swiftType == nil ? type.encoded(value, optional: optional) : value
        }
        func decoded(_ value: String) -> String { swiftType == nil ? type.decoded(value, optional: optional) : value }
    }

    var path: String
    var name: String
    var documentation: [String]
    /// What is bound, in order (a group's members expanded).
    var parameters: [Field] = []
    /// The type's properties, in order: a parameter's name and Swift type, or a group's.
    var properties: [(name: String, swift: String)] = []
    var columns: [Field] = []
    var text: String

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    init(path: String, text: String) throws(Problem) {
        self.path = path
        self.text = text
        var name: String?
        var documentation: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.hasPrefix("--") else { break }
            let body = line.dropFirst(2).trimmingCharacters(in: .whitespaces)
            if body.hasPrefix("name:") {
                name = body.dropFirst(5).trimmingCharacters(in: .whitespaces)
            } else if body.hasPrefix("param ") {
                let field = try Self.field(body.dropFirst(6), path)
                parameters.append(field)
                properties.append((field.name, field.swift))
            } else if body.hasPrefix("params ") {
                let parts = body.dropFirst(7).split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let group = ParameterGroup(rawValue: parts[1]), let first = parts[0].first, first.isLowercase,
                      parts[0].allSatisfy({ $0.isLetter || $0.isNumber }) else {
                    throw Problem(description: "\(path): `\(body)` is not `params name: GROUP` (GROUP one of \(ParameterGroup.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                parameters += group.members.map { Field(name: $0.name, type: $0.type, optional: false, swiftType: nil, group: parts[0]) }
                properties.append((parts[0], group.swift))
            } else if body.hasPrefix("column ") {
                columns.append(try Self.field(body.dropFirst(7), path))
            } else {
                documentation.append(String(line.dropFirst(2).drop { $0 == " " }))
            }
        }
        guard let name, name.first?.isUppercase == true, name.allSatisfy({ $0.isLetter || $0.isNumber }) else {
            throw Problem(description: "\(path): no `-- name: TypeName` line (an UpperCamelCase Swift name) in its header")
        }
        self.name = name
        self.documentation = documentation
        for (kind, names) in [("parameter", properties.map(\.name)), ("column", columns.map(\.name))] where Set(names).count < names.count {
            throw Problem(description: "\(path): a \(kind) name is declared twice")
        }
    }

    /// `name: type`, `name: type?`, `name: type as SwiftType`.
    static func field(_ body: Substring, _ path: String) throws(Problem) -> Field {
        let parts = body.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let first = parts[0].first, first.isLowercase, parts[0].allSatisfy({ $0.isLetter || $0.isNumber }) else {
            throw Problem(description: "\(path): `\(body)` is not `name: type` (a lowerCamelCase Swift name)")
        }
        let typed = parts[1].components(separatedBy: " as ")
        var typeName = typed[0].trimmingCharacters(in: .whitespaces)
        let optional = typeName.hasSuffix("?")
        if optional { typeName.removeLast() }
        guard let type = PostgresType(rawValue: typeName) else {
            throw Problem(description: "\(path): `\(typeName)` is not one of \(PostgresType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let swiftType = typed.count == 2 ? typed[1].trimmingCharacters(in: .whitespaces) : nil
        if let swiftType, swiftType.hasSuffix("?") || swiftType.isEmpty {
            throw Problem(description: "\(path): `\(body)`: write NULL-able as `text? as \(swiftType.dropLast())`")
        }
        return Field(name: parts[0], type: type, optional: optional, swiftType: swiftType, group: nil)
    }

    /// The Swift source of the statement's type: a `HeraldStatement` with its parameters as
    /// properties and its `Row`.
    func swift(module: String, access: String) -> String {
        var out = documentation.drop { $0.isEmpty }.map { "/// \($0)".trimmingCharacters(in: .whitespaces) + "\n" }.joined()
        out += "/// The statement in `Sources/\(module)/SQL/\(path)`.\n"
        out += "\(access)struct \(name): HeraldStatement {\n"
        out += "    \(access)static let name = \"\(module).\(name)\"\n"
        out += "    \(access)static let sql = \(Self.literal(text))\n"
        out += "    \(access)static let bindingDataTypes: [PostgresDataType] = [\(parameters.map { ".\($0.type.dataType)" }.joined(separator: ", "))]\n"
        for property in properties {
            out += "    \(access)var \(property.name): \(property.swift)\n"
        }
        let arguments = properties.map { "\($0.name): \($0.swift)" }.joined(separator: ", ")
        out += "\n    \(access)init(\(arguments)) {\n"
        for property in properties { out += "        self.\(property.name) = \(property.name)\n" }
        out += "    }\n\n"
        out += "    \(access)func makeBindings() throws -> PostgresBindings {\n"
        out += "        \(parameters.isEmpty ? "let" : "var") bindings = PostgresBindings(capacity: \(parameters.count))\n"
        for parameter in parameters {
            let value = parameter.encoded()
            out += "        \(value.hasPrefix("try ") ? "try " : "")bindings.append(\(value.hasPrefix("try ") ? String(value.dropFirst(4)) : value))\n"
        }
        out += "        return bindings\n    }\n"
        if columns.isEmpty {
            out += "\n    \(access)typealias Row = Void\n"
            out += "    \(access)func decodeRow(_ row: PostgresRow) throws {}\n"
        } else {
            out += "\n    \(access)struct Row: Sendable {\n"
            for column in columns { out += "        \(access)var \(column.name): \(column.swift)\n" }
            out += "    }\n\n"
            out += "    \(access)func decodeRow(_ row: PostgresRow) throws -> Row {\n"
            let decoded = columns.map(\.wire)
            let names = columns.indices.map { "c\($0)" }
            if columns.count == 1 {
                out += "        let c0 = try row.decode(\(decoded[0]).self)\n"
            } else {
                out += "        let (\(names.joined(separator: ", "))) = try row.decode((\(decoded.joined(separator: ", "))).self)\n"
            }
            let fields = columns.enumerated().map { index, column in "\(column.name): \(column.decoded("c\(index)"))" }
            out += "        return Row(\(fields.joined(separator: ", ")))\n    }\n"
        }
        out += "}\n"
        return out
    }

    /// A raw string literal of `text`, its delimiter longer than any run of # in it.
    static func literal(_ text: String) -> String {
        var longest = 0, run = 0
        for character in text {
            if character == "#" { run += 1; longest = max(longest, run) } else { run = 0 }
        }
        let hashes = String(repeating: "#", count: longest + 1)
        return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
    }
}

/// Several parameters in a row bound from one Swift value (`-- params NAME: GROUP`): the group's
/// Swift type, and its members in order, each bound as `NAME.member` (a property of the value).
/// `scripts/check-statements.py` expands the same groups (its `GROUPS`).
enum ParameterGroup: String, CaseIterable {
    /// A send's provider calls (`DeliveryAttempt`), as the arrays a statement writes its attempts
    /// table from (`unnest`): the runtime's `Collection<DeliveryAttempt>` properties.
    case deliveryAttempts = "DeliveryAttempts"

    var swift: String {
        switch self {
        case .deliveryAttempts: "[DeliveryAttempt]"
        }
    }

    var members: [(name: String, type: PostgresType)] {
        switch self {
        case .deliveryAttempts:
            [("providers", .textArray), ("results", .textArray), ("httpStatuses", .integerArray), ("errorCodes", .textArray),
             ("providerMessageIDs", .textArray), ("durations", .integerArray)]
        }
    }
}

/// The PostgreSQL types a statement's parameter or column may have, by the name
/// `pg_prepared_statements` and psql's `\gdesc` give them, and the Swift type that carries each.
/// jsonb is not one: bind text and cast (`$4::text::jsonb`), select `::text`.
enum PostgresType: String, CaseIterable {
    case text, boolean, integer, bigint, smallint, bytea, uuid
    case doublePrecision = "double precision"
    case timestamptz = "timestamp with time zone"
    case textArray = "text[]", integerArray = "integer[]", bigintArray = "bigint[]", booleanArray = "boolean[]"
    case timestamptzArray = "timestamp with time zone[]", uuidArray = "uuid[]", byteaArray = "bytea[]"

    /// postgres-nio's `PostgresDataType` member.
    var dataType: String {
        switch self {
        case .text: "text"
        case .boolean: "bool"
        case .integer: "int4"
        case .bigint: "int8"
        case .smallint: "int2"
        case .bytea: "bytea"
        case .uuid: "uuid"
        case .doublePrecision: "float8"
        case .timestamptz: "timestamptz"
        case .textArray: "textArray"
        case .integerArray: "int4Array"
        case .bigintArray: "int8Array"
        case .booleanArray: "boolArray"
        case .timestamptzArray: "timestamptzArray"
        case .uuidArray: "uuidArray"
        case .byteaArray: "byteaArray"
        }
    }

    /// The type callers see.
    var swift: String {
        switch self {
        case .text: "String"
        case .boolean: "Bool"
        case .integer, .bigint, .smallint: "Int"
        case .bytea: "[UInt8]"
        case .uuid: "UUID"
        case .doublePrecision: "Double"
        case .timestamptz: "Date"
        case .textArray: "[String]"
        case .integerArray, .bigintArray: "[Int]"
        case .booleanArray: "[Bool]"
        case .timestamptzArray: "[Date]"
        case .uuidArray: "[UUID]"
        case .byteaArray: "[[UInt8]]"
        }
    }

    /// The type postgres-nio encodes and decodes as exactly this PostgreSQL type.
    var wire: String {
        switch self {
        case .integer: "Int32"
        case .smallint: "Int16"
        case .integerArray: "[Int32]"
        case .bytea: "ByteBuffer"
        case .byteaArray: "[ByteBuffer]"
        default: swift
        }
    }

    /// The expression that binds property `name`: an Int narrowed exactly (a value out of the
    /// column's range throws, naming the parameter), bytes as a buffer.
    func encoded(_ name: String, optional: Bool) -> String {
        let template: String? = switch self {
        case .integer: "try StatementValue.narrow(X, \"\(name)\", as: Int32.self)"
        case .smallint: "try StatementValue.narrow(X, \"\(name)\", as: Int16.self)"
        case .integerArray: "try X.map { try StatementValue.narrow($0, \"\(name)\", as: Int32.self) }"
        case .bytea: "ByteBuffer(bytes: X)"
        case .byteaArray: "X.map { ByteBuffer(bytes: $0) }"
        default: nil
        }
        guard let template else { return name }
        guard optional else { return template.replacingOccurrences(of: "X", with: name) }
        return "\(template.hasPrefix("try ") ? "try " : "")\(name).map { \(template.replacingOccurrences(of: "X", with: "$0")) }"
    }

    /// The expression that gives a column's value from its decoded `name`.
    func decoded(_ name: String, optional: Bool) -> String {
        let conversion: String? = switch self {
        case .integer, .smallint: "Int(X)"
        case .integerArray: "X.map { Int($0) }"
        case .bytea: "Array(buffer: X)"
        case .byteaArray: "X.map { Array(buffer: $0) }"
        default: nil
        }
        guard let conversion else { return name }
        return optional ? "\(name).map { \(conversion.replacingOccurrences(of: "X", with: "$0")) }" : conversion.replacingOccurrences(of: "X", with: name)
    }
}
