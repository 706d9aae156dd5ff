import Foundation
import HeraldRuntime

/// `push.verification` v1: send a silent push carrying a secret to prove the app is genuine.
public struct PushVerificationJob: HeraldJob, Equatable {
    public static let kind = JobKind.push
    public static let name = "push.verification"
    public static let version = 1

    public enum Platform: String, Codable, Sendable, CaseIterable { case apns, fcm }
    public enum Environment: String, Codable, Sendable, CaseIterable { case sandbox, production }

    public var version: Int
    public var receipt: String
    public var deviceToken: String
    public var platform: Platform
    public var environment: Environment
    public var appID: String
    public var timeoutSeconds: Int?

    public init(receipt: String, deviceToken: String, platform: Platform, environment: Environment, appID: String, timeoutSeconds: Int? = nil) {
        self.version = Self.version
        self.receipt = receipt
        self.deviceToken = deviceToken
        self.platform = platform
        self.environment = environment
        self.appID = appID
        self.timeoutSeconds = timeoutSeconds
    }

    enum CodingKeys: String, CodingKey {
        case version, receipt, platform, environment
        case deviceToken = "device_token", appID = "app_id", timeoutSeconds = "timeout_seconds"
    }

    public func validate() throws(JobValidationError) {
        try WireRules.identifier(receipt, field: "receipt")
        guard !deviceToken.isEmpty, deviceToken.utf8.count <= 4096, deviceToken.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw JobValidationError("device_token must be 1 to 4096 printable ASCII characters")
        }
        if platform == .apns {
            guard deviceToken.utf8.count % 2 == 0, deviceToken.allSatisfy(\.isHexDigit) else {
                throw JobValidationError("device_token must be hexadecimal for apns")
            }
        }
        try WireRules.identifier(appID, field: "app_id")
        if let timeoutSeconds, !(1...86_400).contains(timeoutSeconds) {
            throw JobValidationError("timeout_seconds must be between 1 and 86400")
        }
    }
}

