import AsyncHTTPClient
import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import HeraldWire
import Logging
import NIOCore

/// Checks a captcha token at its provider's siteverify endpoint. reCAPTCHA, hCaptcha and
/// Turnstile share one form: a `POST` of `application/x-www-form-urlencoded` `secret`,
/// `response` (the token) and optional `remoteip`, answered by JSON with `success`,
/// `hostname`, `action` (reCAPTCHA v3, Turnstile), `score` (reCAPTCHA v3; hCaptcha
/// Enterprise's risk score) and `error-codes`. Neither the secret nor the token is logged.
struct CaptchaVerifier: Sendable {
    enum Verdict: Sendable, Equatable {
        case passed(score: Double?, hostname: String?)
        /// `captcha_invalid`, `captcha_hostname`, `captcha_action`, `captcha_score`, `captcha_provider`.
        case refused(String)
        /// The endpoint did not answer usefully: try the job again later.
        case unavailable(String)
    }

    let configuration: AppVerificationConfiguration
    let http: ProviderHTTP

    init(configuration: AppVerificationConfiguration) {
        self.configuration = configuration
        self.http = ProviderHTTP(timeoutMilliseconds: configuration.timeoutMilliseconds)
    }

    /// The siteverify answer's fields Herald reads.
    struct Answer: Decodable {
        var success: Bool
        var hostname: String?
        var action: String?
        var score: Double?
        var errorCodes: [String]?
        enum CodingKeys: String, CodingKey { case success, hostname, action, score, errorCodes = "error-codes" }
    }

    func verify(_ captcha: SMSVerificationJob.AppVerification.Captcha, remoteIP: String?, logger: Logger) async -> Verdict {
        guard let endpoint = configuration.captcha(captcha.provider) else { return .refused("captcha_provider") }
        var fields = [("secret", endpoint.secret), ("response", captcha.token)]
        if let remoteIP, !remoteIP.isEmpty { fields.append(("remoteip", remoteIP)) }
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: ProviderHTTP.formEncode(fields)))
        switch await http.execute(request, logger: logger) {
        case .timeout: return .unavailable("captcha_siteverify_timeout")
        case .unreachable(let why): return .unavailable("captcha_siteverify_unreachable: \(why)")
        case .response(let status, let body):
            guard status == 200 else { return .unavailable("captcha_siteverify_http_\(status)") }
            guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(buffer: body)) else {
                return .unavailable("captcha_siteverify_unreadable")
            }
            return judge(answer, provider: captcha.provider, logger: logger)
        }
    }

    func judge(_ answer: Answer, provider: SMSVerificationJob.AppVerification.Provider, logger: Logger) -> Verdict {
        let codes = answer.errorCodes ?? []
        guard answer.success else {
            // The provider's own trouble (e.g. Turnstile's internal-error) is not the token's.
            if codes.contains("internal-error") { return .unavailable("captcha_siteverify_internal_error") }
            logger.notice("captcha token refused by its provider", metadata: ["provider": "\(provider.rawValue)", "error_codes": "\(codes.joined(separator: ","))"])
            return .refused("captcha_invalid")
        }
        if !configuration.hostnames.isEmpty, !configuration.hostnames.contains(answer.hostname ?? "") { return .refused("captcha_hostname") }
        // An answer without `action` (reCAPTCHA v2, hCaptcha) is not judged on it.
        if !configuration.action.isEmpty, let action = answer.action, action != configuration.action { return .refused("captcha_action") }
        if let score = answer.score {
            // reCAPTCHA: 1.0 is very likely a person; hCaptcha Enterprise: 1.0 is very likely a bot.
            let human = provider == .hcaptcha ? 1 - score : score
            if human < configuration.minScore { return .refused("captcha_score") }
        }
        return .passed(score: answer.score, hostname: answer.hostname)
    }
}
