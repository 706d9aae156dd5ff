/// Generic plans for the PL/pgSQL functions on a job's path.
///
/// PostgreSQL plans a function's statements again on every call while it judges a custom
/// plan (one for the call's values) worth it, which it does for the first five calls of a
/// session and then whenever the generic plan's estimate looks worse. For Herald's functions
/// (key lookups, upserts of a few rows, sums over a handful of buckets) the generic plan is the
/// plan, and planning was most of their cost: `herald.sms_rate_take` took 1.3–2.6 ms per call
/// planned per call and 0.63–0.69 ms with `plan_cache_mode = force_generic_plan` (the same
/// session, issue 18). The setting is stored on the function (`ALTER FUNCTION … SET`), so it holds
/// for every session and nowhere else (a client's own statements are planned as before).
///
/// A later `CREATE OR REPLACE FUNCTION` of one of these drops the setting: the migration that
/// replaces it applies ``sql(functions:)`` again.
public enum GenericPlans {
    /// Sets `plan_cache_mode = force_generic_plan` on every function of schema `herald` named
    /// in `functions` (all overloads); a name with no function is an error, so a typo fails the
    /// migration instead of leaving a function planned per call.
    public static func sql(functions: [String]) -> String {
        let names = functions.map { "'\($0)'" }.joined(separator: ", ")
        return """
            DO $$
            DECLARE
                f regprocedure;
                missing text;
            BEGIN
                SELECT string_agg(w, ', ') INTO missing FROM unnest(ARRAY[\(names)]) AS w
                 WHERE NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                                    WHERE n.nspname = 'herald' AND p.proname = w);
                IF missing IS NOT NULL THEN
                    RAISE EXCEPTION 'no function herald.% to set generic plans on', missing;
                END IF;
                FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                          WHERE n.nspname = 'herald' AND p.proname = ANY (ARRAY[\(names)]) LOOP
                    EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', f);
                END LOOP;
            END
            $$;
            """
    }
}
