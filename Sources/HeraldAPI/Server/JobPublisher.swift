import AMQP
import Foundation
import HeraldClient
import HeraldRuntime
import Logging

/// Enqueues a job for a request: published `mandatory` with the broker's confirm awaited, for at
/// most `api.publish_timeout_ms`. No confirm in time, or no broker connection, is a 503 with
/// `Retry-After`: the caller retries with the same id, which is the job's message id, so a job
/// that was confirmed after all is handled once (the workers' job ledger).
struct JobPublisher: Sendable {
    let client: HeraldClient
    let timeout: Duration
    let metrics: APIMetrics

    func enqueue<Job: HeraldJob>(_ job: Job, messageID: String, correlationID: String?, logger: Logger) async throws {
        guard client.connection.acceptsPublishes else {
            metrics.enqueueFailed(client.connection.isConnected ? "blocked" : "disconnected")
            throw APIFailure.brokerUnavailable(retryAfterSeconds: 2)
        }
        do {
            let client = self.client
            try await withDeadline(timeout) {
                _ = try await client.enqueue(job, messageID: messageID, correlationID: correlationID)
            }
        } catch let error as HeraldClientError {
            switch error {
            case .invalidJob(let reason):
                throw APIFailure.invalid(field: nil, reason: reason)
            case .noQueue(let key):
                metrics.enqueueFailed("no_queue")
                logger.error("no queue takes the job; declare the topology (heraldctl topology declare)", metadata: ["routing_key": "\(key)"])
                throw APIFailure.brokerUnavailable(retryAfterSeconds: 5)
            case .broker(let cause):
                metrics.enqueueFailed("broker")
                logger.warning("publish failed", metadata: ["error": "\(cause)"])
                throw APIFailure.brokerUnavailable(retryAfterSeconds: 2)
            }
        } catch is DeadlineExceeded {
            metrics.enqueueFailed("timeout")
            logger.warning("no publisher confirm in time", metadata: ["timeout": "\(timeout)"])
            throw APIFailure.brokerUnavailable(retryAfterSeconds: 2)
        }
    }
}
