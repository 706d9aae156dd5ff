import HeraldRuntime

extension SMSVerificationJob {
    /// `app_verification`: evidence that a genuine app asked for this SMS, either a push
    /// `receipt` the app confirmed (`confirmAppVerification`) with its `app_id`, or a `captcha`
    /// token for herald-sms to check at its provider's siteverify. Secret: never logged.
    public struct AppVerification: Codable, Sendable, Equatable {
        public enum Provider: String, Codable, Sendable, CaseIterable { case recaptcha, hcaptcha, turnstile }

        public struct Captcha: Codable, Sendable, Equatable {
            public var provider: Provider
            public var token: String
            public init(provider: Provider, token: String) { self.provider = provider; self.token = token }
        }

        public var receipt: String?
        public var appID: String?
        public var captcha: Captcha?

        public init(receipt: String, appID: String) { self.receipt = receipt; self.appID = appID }
        public init(captcha: Captcha) { self.captcha = captcha }
        /// As a request gave it: ``validate()`` refuses both or neither.
        public init(receipt: String?, appID: String?, captcha: Captcha?) { self.receipt = receipt; self.appID = appID; self.captcha = captcha }

        enum CodingKeys: String, CodingKey { case receipt, captcha, appID = "app_id" }

        /// The longest captcha token accepted (providers' tokens are about 2,000 characters).
        public static let maxTokenLength = 4096

        func validate() throws(JobValidationError) {
            switch (receipt, captcha) {
            case (let receipt?, nil):
                try WireRules.identifier(receipt, field: "app_verification.receipt")
                guard let appID, !appID.isEmpty else { throw JobValidationError("app_verification.app_id is required with a receipt") }
                guard appID.count <= 255 else { throw JobValidationError("app_verification.app_id is longer than 255 characters") }
            case (nil, let captcha?):
                guard !captcha.token.isEmpty else { throw JobValidationError("app_verification.captcha.token is empty") }
                guard captcha.token.utf8.count <= Self.maxTokenLength else {
                    throw JobValidationError("app_verification.captcha.token is longer than \(Self.maxTokenLength) bytes")
                }
            case (nil, nil): throw JobValidationError("app_verification needs a receipt or a captcha")
            case (_?, _?): throw JobValidationError("app_verification carries a receipt or a captcha, not both")
            }
        }
    }
}
