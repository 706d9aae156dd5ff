import Foundation

// libFuzzer target: herald-api's request decoders, on arbitrary bodies: `JSONFields` (the
// webhook receipt's body), `V1DecodingFailure` (how a refusal of `/v1`'s generated decoding is
// answered, run here on JSONDecoder's refusals of a strict body shaped as the generated types
// decode theirs) and `FormFields` (every Twilio-style `/v2` body and query). Input: byte 0 picks
// the decoder (even: JSON, odd: form), the rest is the body. Checked besides "no crash":
// - every refusal is an `APIFailure.invalid` whose field, if named, is printable ASCII of at
//   most 64 characters after its path, and whose message is printable and short;
// - a refusal never carries a value of the body (a value can be a code or a secret): only
//   field names, which the decoder's own lists or the client's unknown key supply;
// - what the form decoder accepts, encoded again, decodes to the same parameters.

let jsonAllowed: Set<String> = ["phone_number", "code", "attempts", "force_resend", "client", "locale"]
let clientAllowed: Set<String> = ["ip", "user_agent"]
let formAccepted: Set<String> = ["To", "Code", "Channel", "CodeLength", "Enabled", "Locale"]
let formIgnored: Set<String> = ["AppHash"]

/// The marker every string value of a rewritten body carries: a refusal that contains it
/// carried a value.
let marker = "S3NT1NEL"

/// A value as long as `original` (in bytes, at least the marker's), marked.
func marked(like original: String) -> String {
    marker + String(repeating: "v", count: max(0, original.utf8.count - marker.utf8.count))
}

func checkRefusal(_ error: any Error, valuesMarked: Bool) {
    guard case .invalid(let field, let reason) = error as? APIFailure else {
        preconditionFailure("a refusal that is not APIFailure.invalid: \(type(of: error))")
    }
    let message = APIFailure.invalid(field: field, reason: reason).message
    precondition(!message.isEmpty && message.utf8.count <= 400, "message of \(message.utf8.count) bytes")
    precondition(!message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in a message")
    if let field {
        precondition(field.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }, "unprintable field name")
        precondition(field.utf8.count <= 64 + "client.".utf8.count, "field name of \(field.utf8.count) bytes")
    }
    if valuesMarked { precondition(!message.contains(marker), "a refusal carries a value of the body") }
}

func decodeJSON(_ body: Data, valuesMarked: Bool) {
    do {
        let fields = try JSONFields.parse(body, allowed: jsonAllowed)
        // Each accessor on each field: a value of the wrong type or length is a refusal.
        let reads: [() throws -> Void] = [
            { _ = try fields.required("phone_number", maxLength: 32) },
            { _ = try fields.string("code", maxLength: 10) },
            { _ = try fields.int("attempts", range: 1...10) },
            { _ = try fields.bool("force_resend") },
            { _ = try fields.string("locale", maxLength: 35) },
            { if let client = try fields.object("client", allowed: clientAllowed) { _ = try client.string("ip", maxLength: 45); _ = try client.string("user_agent") } },
        ]
        for read in reads {
            do { try read() } catch { checkRefusal(error, valuesMarked: valuesMarked) }
        }
    } catch {
        checkRefusal(error, valuesMarked: valuesMarked)
    }
}

/// The same JSON with every string value replaced by a marked one (nil: not a JSON object).
func markedJSON(_ body: Data) -> Data? {
    func mark(_ node: Any) -> Any {
        if let text = node as? String { return marked(like: text) }
        if let array = node as? [Any] { return array.map(mark) }
        if let object = node as? [String: Any] { return object.mapValues(mark) }
        return node
    }
    // A key that holds the marker (written with escapes) would be named on purpose.
    func keys(_ node: Any) -> [String] {
        if let array = node as? [Any] { return array.flatMap(keys) }
        if let object = node as? [String: Any] { return Array(object.keys) + object.values.flatMap(keys) }
        return []
    }
    guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], !keys(object).contains(where: { $0.contains(marker) }) else { return nil }
    return try? JSONSerialization.data(withJSONObject: mark(object))
}

/// A body decoded as swift-openapi-generator's code decodes `/v1`'s: optional and required keys,
/// a nested object, an array of choices, and a key the schema does not list refused the way
/// OpenAPIRuntime's `ensureNoAdditionalProperties` refuses it.
struct StrictProbe: Decodable {
    enum Choice: String, Decodable { case sms, whatsapp, voice }
    struct Client: Decodable {
        let appID: String?
        enum CodingKeys: String, CodingKey { case appID = "app_id" }
        init(from decoder: any Decoder) throws {
            appID = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .appID)
            try StrictProbe.refuseUnknown(decoder, known: ["app_id"])
        }
    }
    let phoneNumber: String
    let codeLength: Int?
    let forceResend: Bool?
    let client: Client?
    let channels: [Choice]?
    enum CodingKeys: String, CodingKey {
        case phoneNumber = "phone_number", codeLength = "code_length", forceResend = "force_resend", client, channels
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phoneNumber = try container.decode(String.self, forKey: .phoneNumber)
        codeLength = try container.decodeIfPresent(Int.self, forKey: .codeLength)
        forceResend = try container.decodeIfPresent(Bool.self, forKey: .forceResend)
        client = try container.decodeIfPresent(Client.self, forKey: .client)
        channels = try container.decodeIfPresent([Choice].self, forKey: .channels)
        try Self.refuseUnknown(decoder, known: ["phone_number", "code_length", "force_resend", "client", "channels"])
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    static func refuseUnknown(_ decoder: any Decoder, known: Set<String>) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        if let key = container.allKeys.filter({ !known.contains($0.stringValue) }).sorted(by: { $0.stringValue < $1.stringValue }).first {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "Additional properties are disabled, but found 1 unknown keys during decoding")
        }
    }
}

func decodeStrict(_ body: Data, valuesMarked: Bool) {
    do {
        _ = try JSONDecoder().decode(StrictProbe.self, from: body)
    } catch let error as DecodingError {
        checkRefusal(V1DecodingFailure.failure(error), valuesMarked: valuesMarked)
    } catch {
        preconditionFailure("JSONDecoder threw \(type(of: error)), not a DecodingError")
    }
}

func fuzzJSON(_ body: Data) {
    decodeJSON(body, valuesMarked: false)
    decodeStrict(body, valuesMarked: false)
    guard let marked = markedJSON(body) else { return }
    decodeJSON(marked, valuesMarked: true)
    decodeStrict(marked, valuesMarked: true)
}

/// Unreserved characters: what form encoding leaves as it is.
let unreserved: CharacterSet = {
    var set = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    set.insert(charactersIn: "-._~")
    return set
}()

func encodeForm(_ pairs: [(String, String)]) -> String {
    pairs.map { "\($0.0.addingPercentEncoding(withAllowedCharacters: unreserved)!)=\($0.1.addingPercentEncoding(withAllowedCharacters: unreserved)!)" }
        .joined(separator: "&")
}

func decodeForm(_ text: String, valuesMarked: Bool) -> FormFields? {
    do {
        let fields = try FormFields(text, accepted: formAccepted, ignored: formIgnored)
        let reads: [() throws -> Void] = [
            { _ = try fields.required("To", maxLength: 32) }, { _ = try fields.int("CodeLength", range: 4...10) }, { _ = try fields.bool("Enabled") },
        ]
        for read in reads {
            do { try read() } catch { checkRefusal(error, valuesMarked: valuesMarked) }
        }
        return fields
    } catch {
        checkRefusal(error, valuesMarked: valuesMarked)
        return nil
    }
}

func fuzzForm(_ body: Data) {
    let text = String(decoding: body, as: UTF8.self)
    if let fields = decodeForm(text, valuesMarked: false) {
        // Encoded again (unreserved characters only) and decoded: the same parameters.
        var parsed: [(String, String)] = []
        for name in formAccepted.sorted() { if let value = try! fields.string(name, maxLength: .max) { parsed.append((name, value)) } }
        let again = try! FormFields(encodeForm(parsed), accepted: formAccepted, ignored: formIgnored)
        for (name, value) in parsed { precondition(try! again.string(name, maxLength: .max) == value, "encode → decode changed \(name)") }
    }
    // The same names (decoded where they decode) with marked values: no refusal carries one.
    guard !text.contains(marker) else { return }
    let pairs = text.split(separator: "&").map { pair in
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
            String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
        }
        return (parts[0], marked(like: parts.count > 1 ? parts[1] : ""))
    }
    guard !pairs.contains(where: { $0.0.contains(marker) }) else { return }
    _ = decodeForm(encodeForm(pairs), valuesMarked: true)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPIDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let body = Data(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 0 { fuzzJSON(body) } else { fuzzForm(body) }
    return 0
}
