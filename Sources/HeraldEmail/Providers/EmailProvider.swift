import HeraldRuntime

/// A way to deliver an email: SMTP, an HTTP mail API, the dev outbox. Implementations never
/// log or return the bodies (they carry the link).
public typealias EmailProvider = any DeliveryProvider<EmailMessage, NoDetail>
