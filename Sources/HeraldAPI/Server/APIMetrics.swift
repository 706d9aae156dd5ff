import HTTPTypes
import Hummingbird
import Metrics

/// herald-api's own metrics (docs/operations.md): requests by family, route and status, their
/// duration, and what the authenticator refused. No label ever holds a value from a request.
struct APIMetrics: Sendable {
    func request(family: String, route: String, status: Int, seconds: Double) {
        let dimensions = [("family", family), ("route", route), ("status", String(status))]
        Counter(label: "herald_api_requests_total", dimensions: dimensions).increment()
        Timer(label: "herald_api_request_duration_seconds", dimensions: [("family", family), ("route", route)])
            .recordNanoseconds(Int64(seconds * 1e9))
    }

    func refusedAuth(_ why: String) {
        Counter(label: "herald_api_auth_refused_total", dimensions: [("reason", why)]).increment()
    }

    func rateLimited() {
        Counter(label: "herald_api_rate_limited_total").increment()
    }

    func enqueueFailed(_ why: String) {
        Counter(label: "herald_api_enqueue_failures_total", dimensions: [("reason", why)]).increment()
    }
}

/// Counts and times every request of a family (the route is the matched pattern, never the path).
struct RequestMetrics: RouterMiddleware {
    typealias Context = APIContext
    let family: String
    let metrics: APIMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        func record(_ status: Int) {
            let elapsed = ContinuousClock.now - start
            metrics.request(family: family, route: context.endpointPath ?? "unmatched", status: status,
                            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        do {
            let response = try await next(request, context)
            record(Int(response.status.code))
            return response
        } catch let error as any HTTPResponseError {
            record(Int(error.status.code))
            throw error
        } catch {
            record(500)
            throw error
        }
    }
}
