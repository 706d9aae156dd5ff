-- name: FrozenDatesWrite
-- One batch of `enable`: writes the frozen date (`greatest(created_at, kept_enabled_at) +
-- kept_retention`, the rule's (2): docs/architecture.md, "The rule, in one place") of at most `limit` anonymous, unlinked accounts created at or
-- after `from` (a cursor on `created_at`, oldest first) into `delete_after`, returning their
-- `created_at`. Each row is locked (`FOR UPDATE`: a sign-in of one waits for this batch only).
-- Nothing while cleanup is enabled or no schedule is frozen.
-- param from: timestamp with time zone
-- param limit: integer
-- column createdAt: timestamp with time zone
UPDATE herald.accounts a SET delete_after = greatest(a.created_at, p.kept_enabled_at) + p.kept_retention
  FROM herald.cleanup_policy p
 WHERE NOT p.enabled AND a.ctid = ANY (ARRAY(
       SELECT b.ctid FROM herald.accounts b, herald.cleanup_policy q
        WHERE NOT q.enabled AND b.created_at < q.kept_until AND b.created_at >= $1::timestamptz
          AND b.delete_after IS NULL
          AND b.is_anonymous AND NOT EXISTS (SELECT 1 FROM herald.account_providers ap WHERE ap.account_id = b.id)
        ORDER BY b.created_at LIMIT $2::integer FOR UPDATE OF b))
RETURNING a.created_at;
