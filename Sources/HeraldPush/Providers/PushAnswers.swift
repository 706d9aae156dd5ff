import Foundation
import HeraldRuntime

/// How APNs and FCM answers map to ``PushProviderAnswer``: one function per provider, pure,
/// so each answer is unit-tested.
public enum PushAnswers {
    /// APNs provider API: 200 delivered (`apns-id`); 410 Unregistered (with its timestamp,
    /// milliseconds since 1970); 400 BadDeviceToken / DeviceTokenNotForTopic invalid; 403
    /// ExpiredProviderToken / InvalidProviderToken our JWT; 429 and 5xx transient; any other
    /// 4xx final.
    public static func apns(status: Int, reason: String?, timestamp: Int64?, apnsID: String?) -> PushProviderAnswer {
        let reason = reason ?? "http-\(status)"
        switch status {
        case 200: return .delivered(id: apnsID)
        case 410: return .invalidToken(.unregistered, detail: reason, since: timestamp.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) })
        case 400 where reason == "BadDeviceToken" || reason == "DeviceTokenNotForTopic":
            return .invalidToken(.badDeviceToken, detail: reason, since: nil)
        case 403 where reason == "ExpiredProviderToken" || reason == "InvalidProviderToken":
            return .credentialsRefused(reason)
        case 429, 500...: return .transient(reason)
        default: return .rejected(reason)
        }
    }

    /// FCM HTTP v1: 200 delivered (`name`); `UNREGISTERED` (404) unregistered; 400
    /// `INVALID_ARGUMENT` invalid (the request is the same for
    /// every token, so the token is what is wrong); 401 our access token; 429, 5xx, `UNAVAILABLE`, `INTERNAL`,
    /// `QUOTA_EXCEEDED` transient; other 4xx (`SENDER_ID_MISMATCH`, 403) final.
    public static func fcm(status: Int, body: [String: Any]?) -> PushProviderAnswer {
        if status == 200 { return .delivered(id: body?["name"] as? String) }
        let error = body?["error"] as? [String: Any]
        let statusName = error?["status"] as? String
        let details = error?["details"] as? [[String: Any]] ?? []
        let errorCode = details.compactMap { $0["errorCode"] as? String }.first ?? statusName ?? "http-\(status)"
        switch (status, errorCode) {
        case (_, "UNREGISTERED"), (404, "NOT_FOUND"):
            return .invalidToken(.unregistered, detail: "UNREGISTERED", since: nil)
        case (400, "INVALID_ARGUMENT"):
            // Our message is the same for every token, so the token is what FCM found invalid.
            return .invalidToken(.invalidArgument, detail: "INVALID_ARGUMENT", since: nil)
        case (401, _):
            return .credentialsRefused(errorCode)
        case (429, _), (500..., _), (_, "UNAVAILABLE"), (_, "INTERNAL"), (_, "QUOTA_EXCEEDED"):
            return .transient(errorCode)
        default:
            return .rejected(errorCode)
        }
    }
}
