import HeraldRuntime
extension EmailLinkPolicy {
    /// The policy of the `email` configuration. (Its own file: the policy itself depends on
    /// nothing but Foundation, so the fuzzers build it from the sources alone.)
    public init(configuration: EmailConfiguration) {
        self.init(authorizedDomains: configuration.authorizedDomains, linkDomains: configuration.linkDomains,
                  defaultLinkDomain: configuration.defaultLinkDomain)
    }
}
