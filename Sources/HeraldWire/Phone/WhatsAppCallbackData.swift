/// Herald's mark in a WhatsApp message's `biz_opaque_callback_data`: herald-sms writes it with the
/// job's message id (not a secret; Meta's limit is 512 characters), and herald-api's webhook takes
/// only the statuses that carry it (the business number may send messages that are not Herald's).
public enum WhatsAppCallbackData {
    static let prefix = "herald:"

    /// The mark of the message sent for the job `messageID`.
    public static func mark(messageID: String) -> String { prefix + messageID }

    /// A status whose `biz_opaque_callback_data` is this is of a message Herald sent.
    public static func sentByHerald(_ callbackData: String?) -> Bool { callbackData?.hasPrefix(prefix) == true }
}
