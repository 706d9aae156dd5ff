import Foundation

// libFuzzer target: the continue-URL check of email links (EmailLinkPolicy). Checked besides
// "no crash": an approved URL is https (http only for localhost), has no userinfo, backslash,
// control character or percent sign in its authority, and its host is an authorized domain
// (exact, or a subdomain of a `*.` rule) that Foundation's URL parser reads the same way:
// nothing a browser could take to another host gets into a link.
let policy = EmailLinkPolicy(authorizedDomains: ["app.example.com", "*.example.org", "localhost"],
                             linkDomains: ["links.example.com"], defaultLinkDomain: "links.example.com")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContinueURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let url = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let approved = try? policy.approve(.init(url: url, handleCodeInApp: true)) else { return 0 }
    let host = approved.continueHost
    precondition(host == "app.example.com" || host == "localhost" || host.hasSuffix(".example.org"), "approved an unauthorized host")
    let lower = url.lowercased()
    precondition(lower.hasPrefix("https://") || (lower.hasPrefix("http://") && host == "localhost"), "approved a scheme other than https")
    let authority = lower.dropFirst(lower.hasPrefix("https://") ? 8 : 7).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    precondition(!authority.contains("@") && !authority.contains("\\") && !authority.contains("%"), "approved userinfo, a backslash or an encoded host")
    precondition(!url.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "approved a control character")
    precondition(URL(string: url)?.host?.lowercased() == host, "Foundation reads another host than the policy")
    return 0
}
