import HeraldRuntime

/// The `account.deleted` body of ``AccountDeletedEvent`` (reason `anonymous_expired`, with the
/// run id), built by PostgreSQL from the rows a batch deletes: a batch's events are inserted
/// by the statement that deletes its accounts, so the rows never travel to the worker and
/// back (a run of 1,000,000 accounts would build, bind and parse 1,000,000 bodies in Swift).
/// Byte for byte the Swift builder's output for the same id and times (sorted keys,
/// milliseconds, `to_json` escaping; only U+0008 and U+000C are escaped as `\b` and `\f`
/// instead of `\u0008`, `\u000c`): `CleanupTests.theEventsABatchWritesAreTheSwiftBodies` pins it.
enum AccountDeletedSQL {
    /// RFC 3339 UTC with milliseconds, as `Date.iso8601Milliseconds`.
    static func timestamp(_ column: String) -> String {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }

    /// The body for a deleted row with columns `id` and `created_at` under `row`, deleted at
    /// the transaction's `now()`, by run `runIDParameter` (a bound text parameter, e.g. `$1`).
    static func body(_ row: String, runIDParameter: String) -> String {
        """
        '{"account_id":' || to_json(\(row).id)::text
          || ',"created_at":"' || \(timestamp("\(row).created_at"))
          || '","deleted_at":"' || \(timestamp("now()"))
          || '","event":"\(AccountDeletedEvent.name)","occurred_at":"' || \(timestamp("now()"))
          || '","reason":"\(AccountDeletedEvent.expiredAnonymous)","run_id":' || to_json(\(runIDParameter)::text)::text
          || ',"version":1}'
        """
    }
}
