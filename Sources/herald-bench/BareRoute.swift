import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The baseline of herald-api's rows: Hummingbird alone, in herald-bench, on the same event
/// loops a Hummingbird application gets by default. `POST /v1/sms/verifications` reads the body
/// (up to herald-api's `api.max_body_bytes`) and answers 202 with the bytes herald-api answers
/// a start with (`{"status":"queued","verification_id":"…"}`, an id of the same length), and
/// nothing else: no authentication, no JSON parsing, no broker, no database.
final class BareRoute: Sendable {
    let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    static let answer = ByteBuffer(string: #"{"status":"queued","verification_id":""# + String(repeating: "0", count: WrkLoad.startIDLength) + #""}"#)

    init(logger: Logger) async throws {
        let router = Router()
        router.post("v1/sms/verifications") { request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 16_384)
            return Response(status: .accepted, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: Self.answer))
        }
        let (bound, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
                              onServerRunning: { channel in
                                  continuation.yield(channel.localAddress?.port ?? 0)
                                  continuation.finish()
                              }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        self.group = group
        task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var port = 0
        for await value in bound { port = value }
        guard port > 0 else { throw BenchFailure("the bare Hummingbird route did not start") }
        self.port = port
    }

    func close() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }
}
