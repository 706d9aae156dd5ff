-- Judges a request before its SMS. Nothing returned: go ahead (the verification is marked, so
-- its send and verification are counted). Else the scope (region, then prefix) that refuses it:
-- - a number that verified a code before (one of p_known_hashes, its HMACs under every key of the
--   ring, comma-separated, in herald.sms_known_numbers) always goes ahead;
-- - a scope paused (until expires_at; NULL: until lifted) refuses it;
-- - a pause that ran out becomes a lift (lifted_by 'expired') at the first request after it;
-- - for p_grace_seconds after a lift, the scope's window (which still holds the burst) is not
--   judged: the requests let through since (grace_sent, counted here once the request goes
--   ahead, known numbers' too) and their codes verified (grace_verified,
--   herald.fraud_guard_verified) are, against the same floor and conversion;
-- - else a scope that has sent at least its floor in the window with verified < min_conversion
--   * sent, or with undelivered (its providers' receipts, herald.sms_receipt_apply) >
--   p_max_undelivered * sent, is paused now (o_new true for exactly one caller), for p_pause_seconds doubled for
--   each consecutive pause less than a day after the one before, at most p_max_pause_seconds
--   (0: until lifted); o_until and o_seconds say when it ends and its length.
-- Two workers judging one scope: the one that finds an expired pause already lifted, or a
-- lifted one paused again, reads the row again and judges what it finds.
-- A verification that already has a row was judged on its first delivery: go ahead.
--
-- Issue 46 (sms migration 17):
-- - p_again: a later paid send of a verification judged before (a fallback's next channel) is
--   judged by the same pauses and floors, and may trip a pause, but goes ahead without being
--   counted again: its verification was marked, and let through in grace, once.
-- - p_proven: the request proved more than a number (its app verification, a push receipt or a
--   captcha, was accepted): like a known number's, it goes ahead through a pause, so a pause is
--   friction for new users, not a wall an attacker can put round a country.
-- - A burst is judged inside itself: a scope below the sends that would pause it (its floor, or
--   verified / min_conversion once codes were verified, up to twice the floor) in sends counted (a
--   send is counted once it is recorded) counts what the guard let through in the window too (its
--   marks: those of earlier requests of this transaction's group and of groups committed before,
--   sent or not yet), up to that many. Issue 48: that count is read from the minutes triggers keep
--   (herald.sms_fraud_let_through), not mark by mark.
-- - p_usual_multiple: a scope's floor scales with its usual traffic (herald.fraud_guard_floor:
--   that many times the codes it verifies in a usual window, when more than its configured
--   floor), read only when the configured floor would pause it; 0: the configured floor alone.
-- - p_pending_region, p_pending_prefix (issue 48): marks of this request's group, made before it,
--   that no count holds yet: herald.fraud_guard_judge adds a group's marks to the let-through
--   count once, at the group's end, and counts them from the group itself until then.
-- - p_window (issue 48): the scopes' windows as herald.fraud_guard_judge read them once for the
--   whole group, at its start: for the region, then the prefix, the sends, verifications and
--   undelivered receipts counted (herald.sms_fraud_counts) and the let-through count
--   (herald.sms_fraud_let_through), 8 values. NULL: read here, by herald.fraud_guard_activity (both
--   tables, for each scope out of grace: the path of the older signatures). Read here, the four
--   sums were 41 % of this function's time, the same rows read again by every request of a group.
--
-- Issue 31: sequential scans off. Every table here is read by key. On a table analyzed while
-- (nearly) empty, the generic plans a pooled connection keeps read the whole table per request:
-- 0.4-0.7 ms per job instead of 0.035 over the first 10,000 jobs of a fresh deployment.
CREATE OR REPLACE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer, p_max_pause_seconds integer, p_grace_seconds integer, p_known_hashes text, p_max_undelivered double precision, p_again boolean, p_proven boolean,
                                                  p_usual_multiple double precision, p_pending_region bigint, p_pending_prefix bigint, p_window bigint[])
 RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer, o_undelivered bigint)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    scopes text[] := ARRAY['region', 'prefix'];
    keys text[] := ARRAY[p_region, p_prefix];
    floors integer[] := ARRAY[p_region_floor, p_prefix_floor];
    pending bigint[] := ARRAY[coalesce(p_pending_region, 0), coalesce(p_pending_prefix, 0)];
    pause herald.sms_fraud_pauses%ROWTYPE;
    n_sent bigint;
    n_verified bigint;
    n_undelivered bigint;
    n_let_through bigint;
    v_floor bigint;
    v_pausing bigint;
    -- The window's conversion (or its undelivered share) would pause the scope at its floor.
    v_low boolean;
    is_new boolean;
    v_until timestamptz;
    -- The scopes whose pause row was read and is not in grace: at 2, no grace_sent to add.
    out_of_grace integer := 0;
BEGIN
    IF NOT p_again AND EXISTS (SELECT 1 FROM herald.sms_verifications WHERE verification_id = p_verification_id) THEN
        RETURN;
    END IF;
    IF NOT p_proven AND (p_known_hashes IS NULL OR p_known_hashes = ''
       OR NOT EXISTS (SELECT 1 FROM herald.sms_known_numbers WHERE number_hash = ANY(string_to_array(p_known_hashes, ',')))) THEN
        FOR i IN 1 .. 2 LOOP
            CONTINUE WHEN floors[i] <= 0;
            SELECT * INTO pause FROM herald.sms_fraud_pauses WHERE scope = scopes[i] AND key = keys[i];
            IF FOUND AND pause.state = 'paused' AND pause.expires_at IS NOT NULL AND pause.expires_at <= now() THEN
                -- It ran out: a lift by the clock, with the same grace.
                UPDATE herald.sms_fraud_pauses
                   SET state = 'lifted', lifted_at = expires_at, lifted_by = 'expired',
                       grace_until = expires_at + make_interval(secs => p_grace_seconds), grace_sent = 0, grace_verified = 0
                 WHERE scope = scopes[i] AND key = keys[i] AND state = 'paused' AND expires_at <= now()
                RETURNING * INTO pause;
                IF NOT FOUND THEN
                    -- Another worker lifted (or paused) it first: judge the row as it is now.
                    SELECT * INTO pause FROM herald.sms_fraud_pauses WHERE scope = scopes[i] AND key = keys[i];
                END IF;
            END IF;
            IF pause.state = 'paused' AND (pause.expires_at IS NULL OR pause.expires_at > now()) THEN
                RETURN QUERY SELECT scopes[i], keys[i], false, pause.sent::bigint, pause.verified::bigint, pause.expires_at,
                                    (extract(epoch FROM pause.expires_at - pause.paused_at))::integer, pause.undelivered::bigint;
                RETURN;
            END IF;
            IF pause.state = 'lifted' AND pause.grace_until > now() THEN
                -- The budget: what was let through since the end, not the window.
                n_sent := pause.grace_sent::bigint;
                n_verified := pause.grace_verified::bigint;
                n_undelivered := 0;
            ELSE
                out_of_grace := out_of_grace + 1;
                IF p_window IS NOT NULL THEN
                    n_sent := coalesce(p_window[4 * i - 3], 0);
                    n_verified := coalesce(p_window[4 * i - 2], 0);
                    n_undelivered := coalesce(p_window[4 * i - 1], 0);
                    n_let_through := coalesce(p_window[4 * i], 0);
                ELSE
                    SELECT w.sent, w.verified, w.undelivered, w.let_through INTO n_sent, n_verified, n_undelivered, n_let_through
                      FROM herald.fraud_guard_activity(scopes[i], keys[i], p_window_minutes) AS w;
                END IF;
                -- The sends that would pause it: its floor, or more once codes were verified
                -- (verified < min_conversion x sent). Read only up to twice the floor: a scope whose
                -- users verify more is judged on its recorded sends alone.
                v_pausing := CASE WHEN p_min_conversion > 0 THEN greatest(floors[i]::bigint, floor(n_verified / p_min_conversion)::bigint + 1)
                                  ELSE floors[i]::bigint END;
                IF n_sent < v_pausing AND v_pausing <= 2 * floors[i] THEN
                    n_sent := greatest(n_sent, least(n_let_through + pending[i], v_pausing));
                END IF;
            END IF;
            v_low := n_verified < p_min_conversion * n_sent OR (p_max_undelivered < 1 AND n_undelivered > p_max_undelivered * n_sent);
            v_floor := floors[i]::bigint;
            IF v_low AND n_sent >= v_floor THEN
                -- It would pause at the configured floor: the floor its usual traffic sets may be
                -- higher (judged on the sends counted: the let-through count stops below it).
                v_floor := herald.fraud_guard_floor(scopes[i], keys[i], floors[i], p_window_minutes, p_usual_multiple);
            END IF;
            IF v_low AND n_sent >= v_floor THEN
                is_new := NULL;
                v_until := NULL;
                INSERT INTO herald.sms_fraud_pauses AS f (scope, key, state, paused_at, expires_at, sent, verified, undelivered)
                VALUES (scopes[i], keys[i], 'paused', now(),
                        CASE WHEN p_pause_seconds > 0 THEN now() + make_interval(secs => least(p_pause_seconds, p_max_pause_seconds)) END,
                        n_sent, n_verified, n_undelivered)
                ON CONFLICT (scope, key) DO UPDATE
                   SET state = 'paused', paused_at = now(),
                       -- Doubled for each consecutive pause less than a day after the one before.
                       expires_at = CASE WHEN p_pause_seconds > 0 THEN now() + make_interval(secs => least(
                                        p_pause_seconds * power(2, CASE WHEN f.paused_at > now() - interval '1 day' THEN least(f.pauses, 20) ELSE 0 END),
                                        p_max_pause_seconds)) END,
                       sent = EXCLUDED.sent, verified = EXCLUDED.verified, undelivered = EXCLUDED.undelivered,
                       pauses = CASE WHEN f.paused_at > now() - interval '1 day' THEN f.pauses + 1 ELSE 1 END,
                       lifted_at = NULL, lifted_by = NULL, grace_until = NULL, grace_sent = 0, grace_verified = 0
                 WHERE f.state <> 'paused' OR (f.expires_at IS NOT NULL AND f.expires_at <= now())
                RETURNING true, f.expires_at INTO is_new, v_until;
                RETURN QUERY SELECT scopes[i], keys[i], coalesce(is_new, false), n_sent, n_verified, v_until,
                                    (extract(epoch FROM v_until - now()))::integer, n_undelivered;
                RETURN;
            END IF;
        END LOOP;
    END IF;
    IF p_again THEN
        RETURN;
    END IF;
    -- It goes ahead (a known number too, whose code is counted verified as everyone's): one
    -- more let through in each of its scopes in grace; none to look for when both pause rows
    -- were just read out of grace (7 % of this function's time, finding nothing).
    IF out_of_grace < 2 THEN
        UPDATE herald.sms_fraud_pauses SET grace_sent = grace_sent + 1
         WHERE state = 'lifted' AND grace_until > now()
           AND ((scope = 'region' AND key = p_region) OR (scope = 'prefix' AND key = p_prefix));
    END IF;
    INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix)
    VALUES (p_verification_id, p_phone, p_region, p_prefix)
    ON CONFLICT (verification_id) DO UPDATE SET region = EXCLUDED.region, prefix = EXCLUDED.prefix;
    -- Old buckets and marks are cleanup runs' to purge (cleanup.purge.sms_fraud_days), not the send path's.
END;
$function$;

-- The signature before p_window (issue 48), for a herald.fraud_guard_judge of the previous version
-- (replaced by the same migrate, a moment later): the windows read here.
-- To be dropped by a later migration.
CREATE OR REPLACE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer, p_max_pause_seconds integer, p_grace_seconds integer, p_known_hashes text, p_max_undelivered double precision, p_again boolean, p_proven boolean,
                                                  p_usual_multiple double precision, p_pending_region bigint, p_pending_prefix bigint)
 RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer, o_undelivered bigint)
 LANGUAGE sql
AS $function$
    SELECT * FROM herald.fraud_guard_check(p_verification_id, p_phone, p_region, p_prefix, p_window_minutes, p_region_floor, p_prefix_floor,
                                           p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds, p_known_hashes,
                                           p_max_undelivered, p_again, p_proven, p_usual_multiple, p_pending_region, p_pending_prefix, NULL::bigint[]);
$function$;

-- The signature before p_pending_region and p_pending_prefix (issue 48), for a herald-sms of the
-- previous version still running during a rolling upgrade: it judges a group in one statement,
-- request by request, and the marks' trigger counts each mark as it is made (nothing pending).
-- To be dropped by a later migration, once no such worker can be left.
CREATE OR REPLACE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer, p_max_pause_seconds integer, p_grace_seconds integer, p_known_hashes text, p_max_undelivered double precision, p_again boolean, p_proven boolean,
                                                  p_usual_multiple double precision)
 RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer, o_undelivered bigint)
 LANGUAGE sql
AS $function$
    SELECT * FROM herald.fraud_guard_check(p_verification_id, p_phone, p_region, p_prefix, p_window_minutes, p_region_floor, p_prefix_floor,
                                           p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds, p_known_hashes,
                                           p_max_undelivered, p_again, p_proven, p_usual_multiple, 0::bigint, 0::bigint, NULL::bigint[]);
$function$;

-- The signature before p_again, p_proven and p_usual_multiple (a first send's judgment, no
-- evidence, the configured floors), for a herald-sms of the previous
-- version still running during a rolling upgrade. To be dropped by a later migration, once no such
-- worker can be left.
CREATE OR REPLACE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer, p_max_pause_seconds integer, p_grace_seconds integer, p_known_hashes text, p_max_undelivered double precision)
 RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer, o_undelivered bigint)
 LANGUAGE sql
AS $function$
    SELECT * FROM herald.fraud_guard_check(p_verification_id, p_phone, p_region, p_prefix, p_window_minutes, p_region_floor, p_prefix_floor,
                                           p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds, p_known_hashes,
                                           p_max_undelivered, false, false, 0::double precision, 0::bigint, 0::bigint, NULL::bigint[]);
$function$;

-- The previous signature (no p_max_undelivered), for a herald-sms of the previous version still
-- running during a rolling upgrade: the same judgment without the undelivered rule. To be
-- dropped by a later migration, once no such worker can be left.
CREATE OR REPLACE FUNCTION herald.fraud_guard_check(p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer, p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer, p_max_pause_seconds integer, p_grace_seconds integer, p_known_hashes text)
 RETURNS TABLE(o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint, o_until timestamp with time zone, o_seconds integer)
 LANGUAGE sql
AS $function$
    SELECT f.o_scope, f.o_key, f.o_new, f.o_sent, f.o_verified, f.o_until, f.o_seconds
      FROM herald.fraud_guard_check(p_verification_id, p_phone, p_region, p_prefix, p_window_minutes, p_region_floor, p_prefix_floor,
                                    p_min_conversion, p_pause_seconds, p_max_pause_seconds, p_grace_seconds, p_known_hashes, 1.0::double precision) f;
$function$;
