import AMQP
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The Swift peer's job, as the Go peer does it: a body that is not JSON is rejected, any later
/// failure (an id the uuid column refuses, the database, the provider) puts the message back, and
/// a provider answer without a `sid` is recorded with an empty one.
struct PeerWorker: Sendable {
    let postgres: PostgresClient
    let http: HTTPClient
    let provider: String
    let logger: Logger
    static let key = SymmetricKey(data: [UInt8](repeating: UInt8(ascii: "k"), count: 32))
    static let authorization = "Basic " + Data("AC1:token".utf8).base64EncodedString()

    struct Job: Decodable {
        var ID: String
        var Phone: String
    }

    struct Answer: Decodable {
        var sid: String
    }

    func work(_ delivery: AMQPDelivery) async {
        guard let job = try? JSONDecoder().decode(Job.self, from: Data(delivery.body)) else {
            try? await delivery.reject(requeue: false)
            return
        }
        do {
            guard let id = UUID(uuidString: job.ID) else { throw PeerFailure("ID is not a uuid") }
            let code = Self.digits(UInt32.random(in: 0..<1_000_000))
            let digest = Self.hex(HMAC<SHA256>.authenticationCode(for: Array(code.utf8), using: Self.key))
            try await execute(InsertPending(id: id, phone: job.Phone, codeHMAC: digest))
            var request = HTTPClientRequest(url: provider)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Authorization", value: Self.authorization)
            request.body = .bytes(ByteBuffer(string: Self.form(["To": job.Phone, "From": "+15550000000", "Body": "Your code is " + code])))
            let response = try await http.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else { throw PeerFailure("provider answered \(response.status.code)") }
            let sid = (try? JSONDecoder().decode(Answer.self, from: body))?.sid ?? ""
            try await execute(MarkSent(id: id, providerID: sid))
            try await delivery.ack()
        } catch {
            try? await delivery.nack(requeue: true)
        }
    }

    /// Runs a statement of no rows (its connection goes back to the pool once the rows are read).
    func execute<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws where Statement.Row == Void {
        for try await _ in try await postgres.execute(statement, logger: logger) {}
    }

    /// Six digits, zeros first.
    static func digits(_ value: UInt32) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, 6 - text.count)) + text
    }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hex(_ code: HashedAuthenticationCode<SHA256>) -> String { code.withUnsafeBytes { hex($0) } }

    /// `application/x-www-form-urlencoded` as Go's url.Values encodes it: keys sorted, a space as
    /// `+`, every byte but ASCII letters, digits and `-._~` as `%XX`.
    static func form(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { "\(encoded($0.key))=\(encoded($0.value))" }.joined(separator: "&")
    }

    static func encoded(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The Go peer's INSERT, prepared once per connection.
private struct InsertPending: PostgresPreparedStatement {
    typealias Row = Void
    static let sql = "INSERT INTO peer_verifications (id, phone, code_hmac, status) VALUES ($1, $2, $3, 'pending')"
    var id: UUID
    var phone: String
    var codeHMAC: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(id)
        bindings.append(phone)
        bindings.append(codeHMAC)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}

/// The Go peer's UPDATE, prepared once per connection.
private struct MarkSent: PostgresPreparedStatement {
    typealias Row = Void
    static let sql = "UPDATE peer_verifications SET status = 'sent', provider_id = $1 WHERE id = $2"
    var id: UUID
    var providerID: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(providerID)
        bindings.append(id)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}
}
