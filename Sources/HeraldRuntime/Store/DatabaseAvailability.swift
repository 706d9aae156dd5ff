import PostgresNIO

/// Tells "the database is unreachable, wait and try again" from "this statement is wrong".
/// The runner holds deliveries (never acks or dead-letters them) while the database is away.
public enum DatabaseAvailability {
    public static func isUnavailable(_ error: any Error) -> Bool {
        if error is CancellationError || error is StoreError || error is JobFailure || error is MigrationError { return false }
        if let transaction = error as? PostgresTransactionError {
            // What failed inside decides: a statement or a write that refused is no outage
            // (holding it would hold its job for ever); a lost connection is.
            guard let inner = transaction.failure else { return true }
            return isUnavailable(inner)
        }
        guard let error = error as? PSQLError else {
            // Pool/NIO level: connection refused, reset, timed out.
            return true
        }
        if let state = error.serverInfo?[.sqlState] {
            // 08: connection exception; 57P01-57P03: shutdown / cannot connect now; 53: resources.
            return state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53")
        }
        switch error.code {
        case .server, .sslUnsupported, .failedToAddSSLHandler, .unexpectedBackendMessage, .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError, .invalidCommandTag, .queryCancelled, .tooManyParameters:
            return false
        default:
            return true
        }
    }

    /// An error for logs and reasons: its type and, for PostgreSQL, the SQLSTATE; never
    /// its full text, which may quote bound values.
    public static func describe(_ error: any Error) -> String {
        if let inner = (error as? PostgresTransactionError)?.failure { return describe(inner) }
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] { return "PostgreSQL \(state)" }
            return "PostgreSQL \(error.code)"
        }
        return String(reflecting: type(of: error))
    }
}

extension PostgresTransactionError {
    /// The error that ended the transaction: of `BEGIN`, the transaction's body, or `COMMIT`.
    public var failure: (any Error)? { beginError ?? closureError ?? commitError }
}
