import Foundation
import HeraldRuntime
import HeraldWire

/// Builds an action link from approved settings only: `https://<link domain><link path>?mode=…
/// &oobCode=…&continueUrl=…&lang=…` (Firebase's parameter names; the mode in Firebase's
/// spelling: signIn, verifyEmail, resetPassword, verifyAndChangeEmail, recoverEmail).
public enum EmailLink {
    public static func firebaseMode(_ mode: EmailActionJob.Mode) -> String {
        switch mode {
        case .signIn: "signIn"
        case .verifyEmail: "verifyEmail"
        case .resetPassword: "resetPassword"
        case .verifyAndChangeEmail: "verifyAndChangeEmail"
        case .recoverEmail: "recoverEmail"
        }
    }

    public static func build(approved: EmailLinkPolicy.Approved, path: String, mode: EmailActionJob.Mode, code: Secret, locale: String?) -> Secret {
        var query = [
            ("mode", firebaseMode(mode)), ("oobCode", code.revealed), ("continueUrl", approved.continueURL),
        ]
        if let locale { query.append(("lang", locale)) }
        let encoded = query.map { "\($0.0)=\(PercentEncoding.rfc3986.encode($0.1))" }.joined(separator: "&")
        return Secret("https://\(approved.linkDomain)\(path)?\(encoded)")
    }

    /// The settings stored with a code and returned by the consume API (JSON, snake_case).
    static func settingsJSON(_ settings: EmailActionJob.ActionCodeSettings, approved: EmailLinkPolicy.Approved) -> String {
        var object: [String: Any] = ["url": approved.continueURL, "link_domain": approved.linkDomain,
                                     "handle_code_in_app": settings.handleCodeInApp ?? false]
        object["ios_bundle_id"] = settings.iosBundleID
        object["android_package_name"] = settings.androidPackageName
        object["android_install_app"] = settings.androidInstallApp
        object["android_minimum_version"] = settings.androidMinimumVersion
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
