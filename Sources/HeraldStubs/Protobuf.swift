/// Just enough of protobuf's wire format to walk an OTLP export: the length-delimited fields
/// of one number in a message (other fields skipped; a malformed message ends the walk).
enum Protobuf {
    static func fields(_ message: ArraySlice<UInt8>, number: UInt64) -> [ArraySlice<UInt8>] {
        var out: [ArraySlice<UInt8>] = []
        var index = message.startIndex
        func varint() -> UInt64? {
            var value: UInt64 = 0, shift: UInt64 = 0
            while index < message.endIndex, shift < 64 {
                let byte = message[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while index < message.endIndex, let key = varint() {
            switch key & 7 {
            case 0: guard varint() != nil else { return out }
            case 1: index += 8
            case 5: index += 4
            case 2:
                guard let length = varint(), length <= UInt64(message.endIndex - index) else { return out }
                let end = index + Int(length)
                if key >> 3 == number { out.append(message[index..<end]) }
                index = end
            default: return out
            }
        }
        return out
    }
}
