-- herald:legacy-version 9
-- A receipt bound to its device (push_prepare decides invalid), and push_exhausted.

-- herald.push_prepare was redefined here: now functions/push_prepare.sql.
-- herald.push_exhausted was created here: now functions/push_exhausted.sql.
