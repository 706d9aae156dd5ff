import HeraldAPIStore
import HeraldApple
import HeraldClient
import HeraldRuntime
import HeraldSMS
import HTTPTypes
import Hummingbird
import Logging
import PostgresNIO

/// What the routes use, made once per process.
struct APIDependencies: Sendable {
    let configuration: HeraldConfiguration
    let database: PostgresClient
    let publisher: JobPublisher
    let verification: HeraldVerification
    let accounts: HeraldAccounts
    let apple: HeraldAppleSignIn
    let keys: APIKeyStore
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
