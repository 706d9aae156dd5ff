import Foundation
import HeraldPhoneCheck
import HeraldRuntime
import Logging
import PostgresNIO

/// One code message to hand to a provider of any phone channel: an SMS's text, a WhatsApp
/// template's parameters, a call's script.
public struct PhoneMessage: Sendable {
    public var to: String
    public var text: Secret
    /// The code alone (a WhatsApp template takes it as its parameter, not the text).
    public var code: Secret
    /// The job's locale (a WhatsApp template's language).
    public var locale: String?
    /// The text with the code masked, for anything people read (the dev outbox).
    public var maskedText: String
    public var encoding: SMSEncoding
    public var verificationID: String
    /// The job's message id.
    public var messageID: String
    /// What the number's region requires registered with it (`sms.regions.registration`).
    public var registration: SMSConfiguration.RegisteredSend? = nil
}

/// A provider of a phone channel: Twilio, Kannel, a signed webhook, the dev outbox (SMS); the
/// WhatsApp Cloud API; Twilio's Calls API (voice).
public typealias PhoneProvider = any DeliveryProvider<PhoneMessage, NoDetail>
