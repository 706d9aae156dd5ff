import CRabbitMQ
import Foundation

// Conversion between AMQPFieldValue / AMQPTable and rabbitmq-c's amqp_field_value_t / amqp_table_t.

extension AMQPFieldValue {
    /// Builds the C value; memory comes from `arena` and lives until the arena is reset.
    func cValue(in arena: CArena) -> amqp_field_value_t {
        var value = amqp_field_value_t()
        switch self {
        case .bool(let b):
            value.kind = UInt8(ascii: "t")
            value.value.boolean = b ? 1 : 0
        case .int(let i):
            value.kind = UInt8(ascii: "l")
            value.value.i64 = i
        case .double(let d):
            value.kind = UInt8(ascii: "d")
            value.value.f64 = d
        case .string(let s):
            value.kind = UInt8(ascii: "S")
            value.value.bytes = arena.bytes(s)
        case .bytes(let b):
            value.kind = UInt8(ascii: "x")
            value.value.bytes = arena.bytes(b)
        case .timestamp(let date):
            value.kind = UInt8(ascii: "T")
            value.value.u64 = UInt64(max(0, date.timeIntervalSince1970.rounded(.down)))
        case .array(let elements):
            value.kind = UInt8(ascii: "A")
            let entries = arena.allocate(amqp_field_value_t.self, count: elements.count)
            for (i, element) in elements.enumerated() {
                (entries + i).initialize(to: element.cValue(in: arena))
            }
            value.value.array = amqp_array_t(num_entries: Int32(elements.count), entries: entries)
        case .table(let table):
            value.kind = UInt8(ascii: "F")
            value.value.table = AMQPFieldValue.cTable(table, in: arena)
        case .void:
            value.kind = UInt8(ascii: "V")
        }
        return value
    }

    /// Builds a C table (keys sorted, so the wire form is deterministic).
    static func cTable(_ table: AMQPTable, in arena: CArena) -> amqp_table_t {
        guard !table.isEmpty else { return amqp_table_t(num_entries: 0, entries: nil) }
        let entries = arena.allocate(amqp_table_entry_t.self, count: table.count)
        for (i, key) in table.keys.sorted().enumerated() {
            (entries + i).initialize(to: amqp_table_entry_t(key: arena.bytes(key), value: table[key]!.cValue(in: arena)))
        }
        return amqp_table_t(num_entries: Int32(table.count), entries: entries)
    }

    /// Copies a C value into Swift.
    init(_ c: amqp_field_value_t) {
        switch c.kind {
        case UInt8(ascii: "t"): self = .bool(c.value.boolean != 0)
        case UInt8(ascii: "b"): self = .int(Int64(c.value.i8))
        case UInt8(ascii: "B"): self = .int(Int64(c.value.u8))
        case UInt8(ascii: "s"): self = .int(Int64(c.value.i16))
        case UInt8(ascii: "u"): self = .int(Int64(c.value.u16))
        case UInt8(ascii: "I"): self = .int(Int64(c.value.i32))
        case UInt8(ascii: "i"): self = .int(Int64(c.value.u32))
        case UInt8(ascii: "l"): self = .int(c.value.i64)
        case UInt8(ascii: "L"): self = .int(Int64(bitPattern: c.value.u64))
        case UInt8(ascii: "f"): self = .double(Double(c.value.f32))
        case UInt8(ascii: "d"): self = .double(c.value.f64)
        case UInt8(ascii: "D"):
            let decimal = c.value.decimal
            self = .double(Double(decimal.value) / pow(10, Double(decimal.decimals)))
        case UInt8(ascii: "S"): self = .string(c.value.bytes.string)
        case UInt8(ascii: "x"): self = .bytes(c.value.bytes.array)
        case UInt8(ascii: "T"): self = .timestamp(Date(timeIntervalSince1970: TimeInterval(c.value.u64)))
        case UInt8(ascii: "A"):
            let array = c.value.array
            var elements: [AMQPFieldValue] = []
            elements.reserveCapacity(Int(array.num_entries))
            for i in 0..<Int(max(0, array.num_entries)) {
                elements.append(AMQPFieldValue(array.entries[i]))
            }
            self = .array(elements)
        case UInt8(ascii: "F"): self = .table(AMQPFieldValue.table(c.value.table))
        default: self = .void
        }
    }

    /// Copies a C table into Swift.
    static func table(_ c: amqp_table_t) -> AMQPTable {
        var table: AMQPTable = [:]
        guard c.num_entries > 0, let entries = c.entries else { return table }
        table.reserveCapacity(Int(c.num_entries))
        for i in 0..<Int(c.num_entries) {
            table[entries[i].key.string] = AMQPFieldValue(entries[i].value)
        }
        return table
    }
}
