import HeraldRuntime
import Hummingbird
import Metrics

/// herald-api's own metrics (docs/api.md, "Metrics"): requests by family, route and status, their
/// duration, and what the authenticator refused. No label ever holds a value from a request.
/// Handles are made once per label set (``MetricHandles``): every request records two.
struct APIMetrics: Sendable {
    private struct RequestKey: Hashable, Sendable {
        var family: String
        var route: String
        var status: Int
    }

    private struct RouteKey: Hashable, Sendable {
        var family: String
        var route: String
    }

    private let requests = MetricHandles<RequestKey, Counter> { key in
        Counter(label: "herald_api_requests_total", dimensions: [("family", key.family), ("route", key.route), ("status", String(key.status))])
    }
    private let durations = MetricHandles<RouteKey, Metrics.Timer> { key in
        Metrics.Timer(label: "herald_api_request_duration_seconds", dimensions: [("family", key.family), ("route", key.route)])
    }
    private let authRefusals = MetricHandles<String, Counter> { reason in
        Counter(label: "herald_api_auth_refused_total", dimensions: [("reason", reason)])
    }
    private let enqueueFailures = MetricHandles<String, Counter> { reason in
        Counter(label: "herald_api_enqueue_failures_total", dimensions: [("reason", reason)])
    }
    private let rateLimits = Counter(label: "herald_api_rate_limited_total")
    private let startAnswers = MetricHandles<String, Counter> { answer in
        Counter(label: "herald_api_start_answers_total", dimensions: [("answer", answer)])
    }
    private let receipts = MetricHandles<ReceiptKey, Counter> { key in
        Counter(label: "herald_api_receipts_total", dimensions: [("provider", key.provider), ("outcome", key.outcome)])
    }

    private struct ReceiptKey: Hashable, Sendable {
        var provider: String
        var outcome: String
    }

    func request(family: String, route: String, status: Int, duration: Duration) {
        requests.handle(RequestKey(family: family, route: route, status: status)).increment()
        durations.handle(RouteKey(family: family, route: route)).recordNanoseconds(duration.nanoseconds)
    }

    func refusedAuth(_ why: String) { authRefusals.handle(why).increment() }

    func rateLimited() { rateLimits.increment() }

    func enqueueFailed(_ why: String) { enqueueFailures.handle(why).increment() }

    /// `herald_api_start_answers_total{answer}`: starts by their answer: the worker's decision
    /// (sending, reused, test, refused, invalid), or queued (none within `api.decision_wait_ms`).
    func startAnswered(_ answer: String) { startAnswers.handle(answer).increment() }

    /// `herald_api_receipts_total{provider,outcome}`: provider callbacks by what became of them:
    /// accepted (published), ignored (a status Herald does not keep), forged (a source or a
    /// signature that does not hold), invalid, rate_limited, unconfigured (no key to check it
    /// with), unavailable (not published).
    func receipt(_ provider: String, _ outcome: String) { receipts.handle(ReceiptKey(provider: provider, outcome: outcome)).increment() }
}

/// Counts and times every request of a family (the route is the matched pattern, never the path).
struct RequestMetrics: RouterMiddleware {
    typealias Context = APIContext
    let family: String
    let metrics: APIMetrics

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        func record(_ status: Int) {
            metrics.request(family: family, route: context.endpointPath ?? "unmatched", status: status, duration: ContinuousClock.now - start)
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
