-- name: AccountsDeleteBatch
-- Deletes at most `limit` accounts a run may delete (CleanupEligibility; each arm by its index,
-- locked, skipping rows locked by others), by ctid (a TID scan), and writes one
-- `account.deleted` per deleted row to the outbox; returns how many. PostgreSQL builds each body,
-- so the rows never travel to the worker and back: byte for byte AccountDeletedEvent's (reason
-- `anonymous_expired`, the run id; sorted keys, milliseconds, `to_json` escaping, only U+0008
-- and U+000C come out as `\b`, `\f`): CleanupTests.theEventsABatchWritesAreTheSwiftBodies pins it.
-- param exchange: text
-- param runID: text
-- param limit: integer
-- column deleted: bigint
WITH gone AS (
    DELETE FROM herald.accounts WHERE ctid = ANY (ARRAY(
        SELECT * FROM (SELECT a.ctid FROM herald.accounts a
                        WHERE a.delete_after < now()
                          AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
                        ORDER BY a.delete_after LIMIT $3::integer FOR UPDATE OF a SKIP LOCKED) kept
        UNION ALL
        SELECT * FROM (SELECT a.ctid FROM herald.accounts a
                        WHERE a.delete_after IS NULL
                          AND a.created_at < (SELECT CASE WHEN p.enabled THEN CASE WHEN p.enabled_at + p.retention < now() THEN now() - p.retention END
                                                          WHEN p.kept_enabled_at + p.kept_retention < now() THEN least(p.kept_until, now() - p.kept_retention) END
                                                FROM herald.cleanup_policy p)
                          AND a.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = a.id)
                        ORDER BY a.created_at LIMIT $3::integer FOR UPDATE OF a SKIP LOCKED) computed
        LIMIT $3::integer))
    RETURNING id, created_at
), events AS (
    INSERT INTO herald.event_outbox (exchange, name, message_id, body)
    SELECT $1::text, 'account.deleted', gen_random_uuid()::text,
           '{"account_id":' || to_json(gone.id)::text
             || ',"created_at":"' || to_char(gone.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","deleted_at":"' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","event":"account.deleted","occurred_at":"' || to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","reason":"anonymous_expired","run_id":' || to_json($2::text)::text
             || ',"version":1}'
      FROM gone
    RETURNING 1
)
SELECT count(*)::bigint FROM events;
