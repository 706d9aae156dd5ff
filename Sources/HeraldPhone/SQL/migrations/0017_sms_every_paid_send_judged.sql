-- Every paid send judged (issue 46): a fallback's next channel is judged by the fraud guard, the
-- per-IP limit of the request that started it and a budget of paid sends per code
-- (sms.fallback.max_paid_sends), which a new request for a pending code meets too.
-- herald.sms_fallback_take takes two more arguments for them, herald.sms_prepare and
-- herald.sms_prepare_batch one, each with a default, so a previous version's call still resolves
-- to the new form: the old forms are dropped here and the new ones applied right after the
-- migrations (functions/). In between, a job finds no function and is retried.
-- squawk-ignore-file ban-drop-function, require-lock-timeout, require-statement-timeout
-- why: ban-drop-function: each is replaced, after the migrations, by its form with more arguments
--   with defaults, which a previous version's call resolves to.
-- why: require-lock-timeout, require-statement-timeout: dropping a function is catalog only, and
--   waits for no table lock.
DROP FUNCTION IF EXISTS herald.sms_fallback_take(text, integer, text, text, bigint, text[], text[], integer[], integer[]);
DROP FUNCTION IF EXISTS herald.sms_prepare_batch(text[], text[], text[], text[], boolean[], boolean[], text[], bytea[], integer, integer, integer,
    integer[], text[], text[], integer[], integer[], bigint, integer, integer, integer, integer, text[]);
DROP FUNCTION IF EXISTS herald.sms_prepare(text, text, text, text, boolean, boolean, text, bytea, integer, integer, integer,
    text[], text[], integer[], integer[], bigint, integer, integer, integer, integer, text);
