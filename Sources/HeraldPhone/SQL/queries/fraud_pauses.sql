-- name: FraudPauses
-- The fraud guard's paused scopes (with `all`, lifted and expired ones too), newest pause first,
-- each with what it counted at its pause and in the last `windowMinutes`.
-- param windowMinutes: integer
-- param all: boolean
-- column scope: text
-- column key: text
-- column state: text
-- column pausedAt: timestamp with time zone
-- column expiresAt: timestamp with time zone?
-- column sentAtPause: integer
-- column verifiedAtPause: integer
-- column pauses: integer
-- column liftedAt: timestamp with time zone?
-- column liftedBy: text?
-- column graceUntil: timestamp with time zone?
-- column sent: bigint
-- column verified: bigint
-- column undeliveredAtPause: integer
-- column undelivered: bigint
SELECT p.scope, p.key,
       CASE WHEN p.state = 'paused' AND p.expires_at <= now() THEN 'expired' ELSE p.state END,
       p.paused_at, p.expires_at, p.sent, p.verified, p.pauses, p.lifted_at, p.lifted_by, p.grace_until,
       coalesce(sum(c.sent), 0)::bigint, coalesce(sum(c.verified), 0)::bigint, p.undelivered, coalesce(sum(c.undelivered), 0)::bigint
  FROM herald.sms_fraud_pauses p
  LEFT JOIN herald.sms_fraud_counts c
    ON c.scope = p.scope AND c.key = p.key AND c.minute > date_trunc('minute', now()) - make_interval(mins => $1::int)
 WHERE $2::boolean OR (p.state = 'paused' AND (p.expires_at IS NULL OR p.expires_at > now()))
 GROUP BY p.scope, p.key
 ORDER BY p.paused_at DESC;
