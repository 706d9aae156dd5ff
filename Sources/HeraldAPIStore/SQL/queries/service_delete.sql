-- name: ServiceDelete
-- Deletes a Service and (by its foreign keys) its verifications; no row when there is no such Service.
-- param sid: text
-- column sid: text
DELETE FROM herald.verify_services WHERE sid = $1::text RETURNING sid;
