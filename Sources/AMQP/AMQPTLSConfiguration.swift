/// TLS settings used for `amqps://` URLs.
public struct AMQPTLSConfiguration: Sendable, Equatable {
    /// PEM file with the CA certificate(s) that sign the broker's certificate; nil = none loaded.
    public var caCertificatePath: String?
    /// Verify the broker's certificate chain.
    public var verifyPeer: Bool
    /// Verify that the broker's certificate names the host connected to. rabbitmq-c 0.11 matches
    /// DNS names only: connect by name (e.g. `localhost`), not by IP literal, when this is on.
    public var verifyHostname: Bool
    /// PEM client certificate for mutual TLS.
    public var clientCertificatePath: String?
    /// PEM private key of the client certificate.
    public var clientKeyPath: String?

    public init(caCertificatePath: String? = nil, verifyPeer: Bool = true, verifyHostname: Bool = true,
                clientCertificatePath: String? = nil, clientKeyPath: String? = nil) {
        self.caCertificatePath = caCertificatePath
        self.verifyPeer = verifyPeer
        self.verifyHostname = verifyHostname
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
    }
}
