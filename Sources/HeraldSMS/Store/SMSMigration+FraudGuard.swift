import HeraldRuntime

extension SMSSchema {
    /// Issue 16c's migrations of HeraldSMS: the fraud guard (16) and the app-verification record (18).
    /// (17 is HeraldPush's: `herald.push_receipt_consume`.)
    static let fraudAndAppVerification = [fraudGuard, appVerifications]

    /// Migration 16: the fraud guard. Sends and verifications per region and per number prefix
    /// in one-minute buckets; `herald.fraud_guard_check` judges a scope and pauses it;
    /// triggers count a send when its verification turns `sent` and a verification when its
    /// code turns `verified`, in the transaction that makes the change (whoever makes it).
    static let fraudGuard = Migration(version: 16, name: "sms_fraud_guard", sql: """
        CREATE TABLE herald.sms_fraud_counts (
            scope     text NOT NULL CHECK (scope IN ('region','prefix')),
            key       text NOT NULL,
            minute    timestamptz NOT NULL,
            sent      integer NOT NULL DEFAULT 0,
            verified  integer NOT NULL DEFAULT 0,
            PRIMARY KEY (scope, key, minute)
        );
        CREATE INDEX sms_fraud_counts_minute_idx ON herald.sms_fraud_counts (minute);

        -- The scopes of each verification the guard let through (only those are counted).
        CREATE TABLE herald.sms_fraud_marks (
            verification_id  text PRIMARY KEY,
            phone_number     text NOT NULL,
            region           text NOT NULL,
            prefix           text NOT NULL,
            created_at       timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sms_fraud_marks_created_idx ON herald.sms_fraud_marks (created_at);

        -- One row per scope ever paused: paused (until expires_at, NULL: until lifted), lifted
        -- (by whom, when; not paused again before grace_until) or expired.
        CREATE TABLE herald.sms_fraud_pauses (
            scope        text NOT NULL CHECK (scope IN ('region','prefix')),
            key          text NOT NULL,
            state        text NOT NULL CHECK (state IN ('paused','lifted')),
            paused_at    timestamptz NOT NULL,
            expires_at   timestamptz,
            -- The window when it tripped.
            sent         integer NOT NULL,
            verified     integer NOT NULL,
            pauses       integer NOT NULL DEFAULT 1,
            lifted_at    timestamptz,
            lifted_by    text,
            grace_until  timestamptz,
            PRIMARY KEY (scope, key)
        );

        -- Judges a request before its SMS: the first scope (region, then prefix) that is paused,
        -- or that has sent at least its floor in the window with verified < min_conversion * sent
        -- (then paused now: o_new true for exactly one caller). Nothing returned: go ahead (the
        -- verification is marked, so its send and verification are counted). A verification that
        -- already has a row was judged on its first delivery: go ahead.
        CREATE FUNCTION herald.fraud_guard_check(
            p_verification_id text, p_phone text, p_region text, p_prefix text, p_window_minutes integer,
            p_region_floor integer, p_prefix_floor integer, p_min_conversion double precision, p_pause_seconds integer
        ) RETURNS TABLE (o_scope text, o_key text, o_new boolean, o_sent bigint, o_verified bigint)
        LANGUAGE plpgsql AS $$
        DECLARE
            scopes text[] := ARRAY['region', 'prefix'];
            keys text[] := ARRAY[p_region, p_prefix];
            floors integer[] := ARRAY[p_region_floor, p_prefix_floor];
            pause herald.sms_fraud_pauses%ROWTYPE;
            n_sent bigint;
            n_verified bigint;
            is_new boolean;
        BEGIN
            IF EXISTS (SELECT 1 FROM herald.sms_verifications WHERE verification_id = p_verification_id) THEN
                RETURN;
            END IF;
            FOR i IN 1 .. 2 LOOP
                CONTINUE WHEN floors[i] <= 0;
                SELECT * INTO pause FROM herald.sms_fraud_pauses WHERE scope = scopes[i] AND key = keys[i];
                IF FOUND THEN
                    IF pause.state = 'paused' AND (pause.expires_at IS NULL OR pause.expires_at > now()) THEN
                        RETURN QUERY SELECT scopes[i], keys[i], false, pause.sent::bigint, pause.verified::bigint;
                        RETURN;
                    END IF;
                    CONTINUE WHEN pause.state = 'lifted' AND pause.grace_until > now();
                END IF;
                SELECT coalesce(sum(sent), 0), coalesce(sum(verified), 0) INTO n_sent, n_verified
                  FROM herald.sms_fraud_counts
                 WHERE scope = scopes[i] AND key = keys[i]
                   AND minute > date_trunc('minute', now()) - make_interval(mins => p_window_minutes);
                IF n_sent >= floors[i] AND n_verified < p_min_conversion * n_sent THEN
                    is_new := NULL;
                    INSERT INTO herald.sms_fraud_pauses AS f (scope, key, state, paused_at, expires_at, sent, verified)
                    VALUES (scopes[i], keys[i], 'paused', now(),
                            CASE WHEN p_pause_seconds > 0 THEN now() + make_interval(secs => p_pause_seconds) END, n_sent, n_verified)
                    ON CONFLICT (scope, key) DO UPDATE
                       SET state = 'paused', paused_at = now(), expires_at = EXCLUDED.expires_at, sent = EXCLUDED.sent,
                           verified = EXCLUDED.verified, pauses = f.pauses + 1, lifted_at = NULL, lifted_by = NULL, grace_until = NULL
                     WHERE f.state <> 'paused' OR (f.expires_at IS NOT NULL AND f.expires_at <= now())
                    RETURNING true INTO is_new;
                    RETURN QUERY SELECT scopes[i], keys[i], coalesce(is_new, false), n_sent, n_verified;
                    RETURN;
                END IF;
            END LOOP;
            INSERT INTO herald.sms_fraud_marks (verification_id, phone_number, region, prefix)
            VALUES (p_verification_id, p_phone, p_region, p_prefix)
            ON CONFLICT (verification_id) DO UPDATE SET region = EXCLUDED.region, prefix = EXCLUDED.prefix;
            -- Old buckets and marks go now and then (a window is at most a day; a code lives at most a day).
            IF random() < 0.01 THEN
                DELETE FROM herald.sms_fraud_counts WHERE minute < now() - interval '25 hours';
                DELETE FROM herald.sms_fraud_marks WHERE created_at < now() - interval '2 days';
            END IF;
        END;
        $$;

        -- Ends a pause: not paused again before now + p_grace_seconds. False: it was not paused.
        CREATE FUNCTION herald.fraud_guard_lift(p_scope text, p_key text, p_by text, p_grace_seconds integer)
        RETURNS boolean LANGUAGE sql AS $$
            WITH lifted AS (
                UPDATE herald.sms_fraud_pauses
                   SET state = 'lifted', lifted_at = now(), lifted_by = p_by, grace_until = now() + make_interval(secs => p_grace_seconds)
                 WHERE scope = p_scope AND key = p_key AND state = 'paused'
                RETURNING 1)
            SELECT EXISTS (SELECT 1 FROM lifted);
        $$;

        CREATE FUNCTION herald.fraud_guard_count(p_region text, p_prefix text, p_sent integer, p_verified integer)
        RETURNS void LANGUAGE sql AS $$
            INSERT INTO herald.sms_fraud_counts AS c (scope, key, minute, sent, verified)
            VALUES ('region', p_region, date_trunc('minute', now()), p_sent, p_verified),
                   ('prefix', p_prefix, date_trunc('minute', now()), p_sent, p_verified)
            ON CONFLICT (scope, key, minute) DO UPDATE SET sent = c.sent + EXCLUDED.sent, verified = c.verified + EXCLUDED.verified;
        $$;

        -- A send: the verification turns `sent` (herald-sms records the provider's acceptance).
        CREATE FUNCTION herald.fraud_guard_sent() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            m herald.sms_fraud_marks%ROWTYPE;
        BEGIN
            SELECT * INTO m FROM herald.sms_fraud_marks WHERE verification_id = NEW.verification_id;
            IF FOUND THEN
                PERFORM herald.fraud_guard_count(m.region, m.prefix, 1, 0);
            END IF;
            RETURN NULL;
        END;
        $$;
        CREATE TRIGGER sms_verifications_fraud_guard_sent AFTER UPDATE OF state ON herald.sms_verifications
            FOR EACH ROW WHEN (NEW.state = 'sent' AND OLD.state IS DISTINCT FROM 'sent')
            EXECUTE FUNCTION herald.fraud_guard_sent();

        -- A verification: the code turns `verified` (the check API's success), counted in the
        -- scopes of the latest verification whose SMS carried it.
        CREATE FUNCTION herald.fraud_guard_verified() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            m_region text;
            m_prefix text;
        BEGIN
            SELECT m.region, m.prefix INTO m_region, m_prefix
              FROM herald.sms_verifications v JOIN herald.sms_fraud_marks m USING (verification_id)
             WHERE v.code_id = NEW.id AND v.state = 'sent'
             ORDER BY m.created_at DESC LIMIT 1;
            IF FOUND THEN
                PERFORM herald.fraud_guard_count(m_region, m_prefix, 0, 1);
            END IF;
            RETURN NULL;
        END;
        $$;
        CREATE TRIGGER sms_codes_fraud_guard_verified AFTER UPDATE OF status ON herald.sms_codes
            FOR EACH ROW WHEN (NEW.status = 'verified' AND OLD.status IS DISTINCT FROM 'verified')
            EXECUTE FUNCTION herald.fraud_guard_verified();
        """)

    /// Migration 18: the app evidence accepted for a verification (receipt or captcha), so that
    /// a redelivery of its job is not refused for a single-use token it already spent.
    static let appVerifications = Migration(version: 18, name: "sms_app_verifications", sql: """
        CREATE TABLE herald.sms_app_verifications (
            verification_id  text PRIMARY KEY,
            phone_number     text NOT NULL,
            method           text NOT NULL CHECK (method IN ('receipt','captcha')),
            -- recaptcha, hcaptcha, turnstile; or the receipt's app id.
            detail           text NOT NULL,
            score            double precision,
            hostname         text,
            created_at       timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sms_app_verifications_created_idx ON herald.sms_app_verifications (created_at);
        """)
}
