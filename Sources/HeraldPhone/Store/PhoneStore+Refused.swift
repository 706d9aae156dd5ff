import HeraldWire
import Logging
import PostgresNIO

extension PhoneStore {
    /// The write of a verification refused before anything was decided in the database (its
    /// number's region or type, app verification, the fraud guard): recorded `refused` with its
    /// reason, in the job's outcome transaction. One already there is left as it is.
    static func refusedRow(_ job: SMSVerificationJob, phone: String, messageID: String, reason: String)
        -> @Sendable (PostgresConnection, Logger) async throws -> Void {
        let (id, purpose) = (job.verificationID, job.purpose.rawValue)
        return { connection, logger in
            try await VerificationRefused(verificationID: id, phoneNumber: phone, purpose: purpose, messageID: messageID, reason: reason)
                .rows(on: connection, logger: logger)
        }
    }
}
