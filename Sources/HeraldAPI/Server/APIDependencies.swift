import HTTPTypes
import HeraldAPIStore
import HeraldClient
import HeraldPhoneCheck
import HeraldRuntime
import Hummingbird
import Logging
import PostgresNIO

/// What the routes use, made once per process.
struct APIDependencies: Sendable {
    let configuration: HeraldConfiguration
    let database: PostgresClient
    /// The jobs a start does not record (push, Apple, accounts, receipts): published with the broker's confirm.
    let publisher: JobPublisher
    /// Starts (/v1 SMS and email, /v2 create): recorded in the outbox, answered with the decision.
    let starts: JobStarts
    var replies: DecisionReplies { starts.replies }
    let verification: HeraldVerification
    let accounts: HeraldAccounts
    let apple: HeraldAppleSignIn
    let keys: KeyCache
    let verify: VerifyStore
    let metrics: APIMetrics

    var api: APIConfiguration { configuration.api }
    var sms: SMSConfiguration { configuration.sms }
}

extension APIDependencies {
    /// Twilio resources as this request's client reaches them.
    func resources(_ request: Request, _ context: APIContext) throws -> VerifyResources {
        VerifyResources(request: request, publicURL: api.publicURL, key: try context.requireKey(), tls: api.tlsEnabled)
    }
}
