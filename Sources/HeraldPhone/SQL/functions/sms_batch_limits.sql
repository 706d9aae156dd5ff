-- The counters a group's fast requests take: one row per (request, limit), with its
-- counter's key (global: this group's shard) and current bucket (see herald.sms_rate_take).
CREATE OR REPLACE FUNCTION herald.sms_batch_limits(p_fast integer[], p_limit_requests integer[], p_scopes text[], p_keys text[], p_windows integer[], p_maxes integer[], p_now timestamp with time zone, p_shard integer)
 RETURNS TABLE(req integer, scope text, key text, max integer, window_seconds integer, bucket integer, bucket_start timestamp with time zone)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT l.req, l.scope,
           CASE WHEN l.scope = 'global' THEN 'shard-' || l.window_seconds || '-' || p_shard ELSE l.key END,
           l.max, l.window_seconds, greatest(l.window_seconds / 10, 1),
           to_timestamp(floor(extract(epoch FROM p_now) / greatest(l.window_seconds / 10, 1))
                        * greatest(l.window_seconds / 10, 1))
      FROM unnest(p_limit_requests, p_scopes, p_keys, p_windows, p_maxes) AS l(req, scope, key, window_seconds, max)
     -- force_resend's own limit counts only a resend of a pending code: never a fast request's.
     WHERE l.req = ANY (p_fast) AND l.scope <> 'resend'
$function$;
