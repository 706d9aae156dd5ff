import Crypto
import Foundation
import HTTPTypes
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Hummingbird
import Logging

/// `/v1/receipts/{twilio,kannel,webhook,whatsapp}`: the providers' delivery receipts (docs/sms.md,
/// "Delivery receipts"; docs/whatsapp.md). No API key: each callback is checked the provider's
/// way (Twilio's `X-Twilio-Signature` over `sms.receipts.base_url`'s URL, the signature herald-sms
/// put in Kannel's `dlr-url`, Standard Webhooks for the webhook provider, Meta's
/// `X-Hub-Signature-256`); a callback that fails it is 401. Each one that holds is published as an `sms.receipt` job (one message id per provider
/// message and status, so a callback sent again is handled once) and answered 204 once the
/// broker confirmed it; 503 otherwise. A status Herald does not keep is answered 204 and
/// ignored. Rate-limited per source address (IPv6 per /64), after the signature: signed
/// callbacks at `api.receipts.rate_per_second`, refused ones at a hundredth of it (a forger
/// cannot spend a provider's budget). Kannel's reports only from `sms.receipts.kannel_allowed_sources`,
/// loopback when none is listed: its signature cannot cover the type Kannel fills in, so whoever
/// holds one `dlr-url` could otherwise report it delivered or undelivered at will.
struct ReceiptRoutes {
    let dependencies: APIDependencies
    let addresses: ClientAddress
    /// Signed callbacks per source.
    let signed: KeyRateLimiter
    /// Refused callbacks per source.
    let refused: KeyRateLimiter
    let kannelSources: [CIDRBlock]

    init(dependencies: APIDependencies, addresses: ClientAddress) {
        self.dependencies = dependencies
        self.addresses = addresses
        let api = dependencies.api
        signed = KeyRateLimiter(perSecond: api.receiptRatePerSecond, burst: api.receiptRateBurst)
        refused = KeyRateLimiter(perSecond: max(1, api.receiptRatePerSecond / 100), burst: max(10, api.receiptRateBurst / 100))
        // Unlisted: this host only (Kannel beside herald-api, as `make run` runs it).
        let listed = dependencies.sms.receipts.kannelAllowedSources.compactMap { CIDRBlock($0) }
        kannelSources = listed.isEmpty ? CIDRBlock.loopback : listed
    }

    func add(to group: RouterGroup<APIContext>) {
        group.post("twilio", use: twilio)
        group.get("kannel", use: kannel)
        group.post("kannel", use: kannel)
        group.post("webhook", use: webhook)
        group.get("whatsapp", use: whatsappHandshake)
        group.post("whatsapp", use: whatsapp)
    }

    private var receipts: SMSConfiguration.Receipts { dependencies.sms.receipts }

    func twilio(_ request: Request, context: APIContext) async throws -> Response {
        try await take("twilio", request, context) { _ in try await twilioReceipt(request) }
    }

    private func twilioReceipt(_ request: Request) async throws -> [SMSReceiptJob] {
        guard receipts.enabled, !dependencies.sms.twilio.authToken.isEmpty else { throw Unconfigured() }
        var request = request
        let buffer = try await request.collectBody(upTo: dependencies.api.maxBodyBytes)
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw APIFailure.invalid(field: "body", reason: "not UTF-8")
        }
        let pairs = try TwilioStatusCallback.pairs(text)
        // The URL Twilio requested: the StatusCallback herald-sms gave it, and any query on it.
        let url = receipts.twilioURL + (request.uri.query.map { "?" + $0 } ?? "")
        guard TwilioStatusCallback.holds(request.headers[.twilioSignature], url: url, pairs: pairs,
                                         authToken: dependencies.sms.twilio.authToken) else { throw APIFailure.forgedCallback }
        return try TwilioStatusCallback.receipt(pairs).map { [$0] } ?? []
    }

    func kannel(_ request: Request, context: APIContext) async throws -> Response {
        try await take("kannel", request, context) { source in
            guard receipts.enabled, !receipts.kannelSecret.isEmpty else { throw Unconfigured() }
            guard source.map({ ip in kannelSources.contains { $0.contains(ip) } }) == true else {
                throw APIFailure.forgedCallback
            }
            let fields = try FormFields.query(request, accepted: KannelDLR.accepted)
            let id = try KannelDLR.signedID(fields, secret: receipts.kannelSecret)
            return try KannelDLR.receipt(fields, id: id).map { [$0] } ?? []
        }
    }

    func webhook(_ request: Request, context: APIContext) async throws -> Response {
        try await take("webhook", request, context) { _ in
            guard let key = StandardWebhooks.key(secret: dependencies.sms.webhook.secret) else { throw Unconfigured() }
            var request = request
            let body = Array(try await request.collectBody(upTo: dependencies.api.maxBodyBytes).readableBytesView)
            do {
                try StandardWebhooks.verify(id: request.headers[.webhookID], timestamp: request.headers[.webhookTimestamp],
                                            signatures: request.headers[.webhookSignature], body: body, key: key)
            } catch {
                throw APIFailure.forgedCallback
            }
            return [try WebhookReceipt.receipt(body)]
        }
    }

    /// Meta's subscription handshake: the challenge back when the verify token is ours.
    func whatsappHandshake(_ request: Request, context: APIContext) async throws -> Response {
        let settings = dependencies.sms.whatsapp
        guard !settings.verifyToken.isEmpty else {
            dependencies.metrics.receipt("whatsapp", "unconfigured")
            throw APIFailure.notFound("receipt endpoint")
        }
        let fields = try FormFields.query(request, accepted: ["hub.mode", "hub.verify_token", "hub.challenge"])
        guard try fields.string("hub.mode", maxLength: 16) == "subscribe", let token = try fields.string("hub.verify_token", maxLength: 256),
              Data(SHA256.hash(data: Array(token.utf8))) == Data(SHA256.hash(data: Array(settings.verifyToken.utf8))),
              let challenge = try fields.string("hub.challenge", maxLength: 256) else {
            // Guesses of the token are refused callbacks: the source's small budget.
            try limit(refused, source: Self.source(client(request, context)), provider: "whatsapp")
            dependencies.metrics.receipt("whatsapp", "forged")
            throw APIFailure.forgedCallback
        }
        return Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: .init(string: challenge)))
    }

    func whatsapp(_ request: Request, context: APIContext) async throws -> Response {
        // Meta batches statuses (up to 3 MB a notification) and takes 200 as the acknowledgement.
        try await take("whatsapp", request, context, answer: .ok) { _ in
            let settings = dependencies.sms.whatsapp
            guard !settings.appSecret.isEmpty else { throw Unconfigured() }
            var request = request
            let body = Array(try await request.collectBody(upTo: Self.whatsappMaxBodyBytes).readableBytesView)
            guard WhatsAppWebhook.holds(request.headers[.hubSignature], body: body, appSecret: settings.appSecret) else { throw APIFailure.forgedCallback }
            return try WhatsAppWebhook.receipts(body, phoneNumberID: settings.phoneNumberID)
        }
    }

    /// The largest notification Meta sends.
    static let whatsappMaxBodyBytes = 3 << 20

    /// No key to check this provider's callbacks with: the route is not there (404).
    private struct Unconfigured: Error {}

    /// The rate limits of its source, before anything is read (a source whose refused
    /// callbacks spent their budget is answered 429 unread); `read` (checks the source and the
    /// signature, gives the receipts, none to ignore); each job published; each outcome counted.
    private func take(_ provider: String, _ request: Request, _ context: APIContext, answer: HTTPResponse.Status = .noContent,
                      _ read: (ClientIP?) async throws -> [SMSReceiptJob]) async throws -> Response {
        let metrics = dependencies.metrics
        let client = client(request, context)
        let source = Self.source(client)
        if let wait = refused.wait(source) {
            metrics.receipt(provider, "rate_limited")
            throw APIFailure.rateLimited(retryAfterSeconds: wait)
        }
        try limit(signed, source: source, provider: provider)
        let receipts: [SMSReceiptJob]
        do {
            receipts = try await read(client)
        } catch is Unconfigured {
            metrics.receipt(provider, "unconfigured")
            throw APIFailure.notFound("receipt endpoint")
        } catch let failure as APIFailure {
            _ = refused.take(source)
            metrics.receipt(provider, failure == .forgedCallback ? "forged" : "invalid")
            if failure == .forgedCallback {
                context.logger.notice("a receipt callback refused: its source or signature does not hold", metadata: ["provider": "\(provider)", "source": "\(source)"])
            }
            throw failure
        }
        if receipts.isEmpty { metrics.receipt(provider, "ignored") }
        for receipt in receipts { try await publish(receipt, provider, context) }
        return Response(status: answer)
    }

    /// The request's client address (`api.trusted_proxies` believed).
    private func client(_ request: Request, _ context: APIContext) -> ClientIP? {
        addresses.resolve(peer: context.peer, forwardedFor: request.headers[values: .forwardedFor])
    }

    /// A source's bucket key: its address, an IPv6 one per /64.
    private static func source(_ client: ClientIP?) -> String { client?.limitKey(ipv6PrefixLength: 64) ?? "unknown" }

    /// One request of `source` taken from `limiter`, or 429 (counted) when its budget is spent.
    private func limit(_ limiter: KeyRateLimiter, source: String, provider: String) throws {
        guard let wait = limiter.take(source) else { return }
        dependencies.metrics.receipt(provider, "rate_limited")
        throw APIFailure.rateLimited(retryAfterSeconds: wait)
    }

    private func publish(_ receipt: SMSReceiptJob, _ provider: String, _ context: APIContext) async throws {
        let metrics = dependencies.metrics
        do {
            try await dependencies.publisher.enqueue(receipt, messageID: receipt.messageID, correlationID: nil, logger: context.logger)
        } catch {
            metrics.receipt(provider, "unavailable")
            throw error
        }
        metrics.receipt(provider, "accepted")
    }
}

extension HTTPField.Name {
    static let twilioSignature = HTTPField.Name("X-Twilio-Signature")!
    static let webhookID = HTTPField.Name("webhook-id")!
    static let webhookTimestamp = HTTPField.Name("webhook-timestamp")!
    static let webhookSignature = HTTPField.Name("webhook-signature")!
    static let hubSignature = HTTPField.Name("X-Hub-Signature-256")!
}
