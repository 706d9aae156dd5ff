#!/usr/bin/env bash
# The SQL linters (called by scripts/test.sh; see docs/testing.md, "The SQL linters"):
#   1. plpgsql_check (Debian postgresql-15-plpgsql-check) on every function of schema herald, as
#      `heraldctl migrate` leaves them in a fresh database `herald_lint` on the local server: each
#      PL/pgSQL function with every warning class on (a trigger function once per trigger, with
#      its table and transition tables); an error fails, a warning fails unless its function's
#      file (Sources/*/SQL/functions/) accepts it with `-- plpgsql_check: accept <text> — <why>`.
#      plpgsql_check does not read LANGUAGE sql functions: each of those is created again from its
#      definition with check_function_bodies on (in a transaction rolled back), which makes
#      PostgreSQL parse and analyse its body (the migrator creates definitions with it off).
#   2. squawk (squawk-cli from PyPI, in a venv under $HERALD_RUN_DIR, default .run/venv-lint, made
#      once, with psycopg for step 3) over every Sources/*/SQL/migrations/*.sql, configured by .squawk.toml (PostgreSQL 15,
#      each file in a transaction of its own as the migrator runs it); a finding fails unless a
#      squawk-ignore comment in the file names its rule, beside a `-- why: <rule>: <reason>` line.
#   3. statements: every Sources/*/SQL/queries/*.sql prepared on herald_lint and described, its
#      parameter and column types, and the NULL-ness of a column read straight from a table, as
#      its header declares them (scripts/check-statements.py): the header is what the EmbedFiles
#      plugin generates the statement's Swift type from.
# Ends with one summary line; exits 1 naming each problem (file:line where there is one).
#
#   scripts/lint-sql.sh            (servers up: make services; heraldctl built)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RUN_DIR="${HERALD_RUN_DIR:-$ROOT/.run}"
VENV="$RUN_DIR/venv-lint"
SQUAWK_VERSION=2.70.0
PSYCOPG_VERSION=3.2.3
HERALDCTL="${HERALD_TEST_BIN_DIR:-$ROOT/.build/debug}/heraldctl"
started=$(date +%s%N)
say() { printf 'lint-sql: %s\n' "$*"; }
fail() { printf 'lint-sql: FAILED: %s\n' "$*" >&2; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

eval "$(scripts/services.sh env)"
export HERALD_DATABASE_URL="${HERALD_DATABASE_URL%/*}/herald_lint"
export HERALD_LOG_LEVEL="${HERALD_LOG_LEVEL:-warning}"
ADMIN_URL="${HERALD_DATABASE_URL%/*}/postgres"
psql_lint() { psql -X -q -v ON_ERROR_STOP=1 "$HERALD_DATABASE_URL" "$@"; }
[ -x "$HERALDCTL" ] || fail "no $HERALDCTL (swift build --product heraldctl)"

# ---------- 1. plpgsql_check ----------
PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$ADMIN_URL" \
  -c "DROP DATABASE IF EXISTS herald_lint WITH (FORCE)" -c "CREATE DATABASE herald_lint" \
  || fail "cannot (re)create herald_lint on ${ADMIN_URL%/*} (make services)"
"$HERALDCTL" migrate >"$TMP/migrate.log" 2>&1 || { cat "$TMP/migrate.log" >&2; fail "heraldctl migrate on herald_lint"; }
[ "$(psql_lint -At -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'plpgsql_check'")" = 1 ] \
  || fail "plpgsql_check is not installed for this PostgreSQL (scripts/services.sh install: postgresql-15-plpgsql-check)"
# In public, not in the first schema of the search path ("$user": herald, the schema it checks).
psql_lint -c "CREATE EXTENSION plpgsql_check WITH SCHEMA public"
psql_lint -At >"$TMP/check.json" <<'SQL'
BEGIN;
-- LANGUAGE sql functions, created again from their definitions with their bodies checked.
CREATE TEMP TABLE sql_validation (signature text, error text) ON COMMIT DROP;
SET LOCAL check_function_bodies = on;
DO $$
DECLARE f record;
BEGIN
    FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
              WHERE n.nspname = 'herald' AND l.lanname = 'sql' ORDER BY p.proname LOOP
        BEGIN
            EXECUTE pg_get_functiondef(f.oid);
            INSERT INTO sql_validation VALUES (f.oid::regprocedure::text, NULL);
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO sql_validation VALUES (f.oid::regprocedure::text, SQLERRM);
        END;
    END LOOP;
END $$;
WITH fn AS (
    SELECT p.oid, p.proname, l.lanname, p.prorettype = 'trigger'::regtype AS is_trigger
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
     WHERE n.nspname = 'herald'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
), target AS (
    -- A trigger function once per trigger: its table, and its transition tables' names.
    SELECT fn.oid, fn.proname, coalesce(t.tgrelid, 0) AS relid, t.tgoldtable, t.tgnewtable
      FROM fn LEFT JOIN pg_trigger t ON t.tgfoid = fn.oid AND NOT t.tgisinternal
     WHERE fn.lanname = 'plpgsql' AND (NOT fn.is_trigger OR t.oid IS NOT NULL)
)
SELECT json_build_object(
    'ledger', (SELECT json_agg(json_build_object('group', schema_group, 'path', path, 'checksum', checksum))
                 FROM public.herald_schema_ledger),
    'functions', (SELECT json_agg(json_build_object(
                      'name', fn.proname, 'language', fn.lanname, 'trigger', fn.is_trigger,
                      'triggers', (SELECT json_agg(t.tgname) FROM pg_trigger t WHERE t.tgfoid = fn.oid AND NOT t.tgisinternal))
                      ORDER BY fn.proname) FROM fn),
    'findings', (SELECT json_agg(json_build_object(
                     'function', x.proname, 'lineno', r.lineno, 'level', r.level, 'sqlstate', r.sqlstate,
                     'message', r.message, 'detail', r.detail, 'hint', r.hint, 'statement', r.statement))
                   FROM target x,
                   LATERAL public.plpgsql_check_function_tb(x.oid, x.relid, fatal_errors => false,
                       other_warnings => true, extra_warnings => true, performance_warnings => true,
                       security_warnings => true, compatibility_warnings => true,
                       oldtable => x.tgoldtable, newtable => x.tgnewtable) r),
    'sql_functions', (SELECT json_agg(json_build_object('signature', signature, 'error', error)) FROM sql_validation),
    'version', (SELECT extversion FROM pg_extension WHERE extname = 'plpgsql_check'));
ROLLBACK;
SQL
status=0
python3 scripts/lint_sql.py ledger "$TMP/check.json" >/dev/null || exit 1
python3 scripts/lint_sql.py plpgsql "$TMP/check.json" >"$TMP/plpgsql.out" || status=1
plpgsql_check_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$TMP/check.json")

# ---------- 2. squawk ----------
if ! "$VENV/bin/squawk" --version 2>/dev/null | grep -qx "squawk $SQUAWK_VERSION" \
   || [ "$("$VENV/bin/python" -c 'import psycopg; print(psycopg.__version__)' 2>/dev/null)" != "$PSYCOPG_VERSION" ]; then
  say "making $VENV (squawk-cli $SQUAWK_VERSION and psycopg $PSYCOPG_VERSION from PyPI)"
  rm -rf "$VENV"
  /usr/bin/python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "squawk-cli==$SQUAWK_VERSION" "psycopg[binary]==$PSYCOPG_VERSION" \
    || fail "pip install squawk-cli==$SQUAWK_VERSION psycopg[binary]==$PSYCOPG_VERSION"
fi
python3 scripts/lint_sql.py squawk "$VENV/bin/squawk" .squawk.toml >"$TMP/squawk.out" || status=1

# ---------- 3. statements ----------
# psycopg: the venv's (made in step 2).
"$VENV/bin/python" scripts/check-statements.py "$HERALD_DATABASE_URL" >"$TMP/statements.out" || status=1

# ---------- summary ----------
value() { sed -n "s/^RESULT .*\b$2=\([^ ]*\).*/\1/p" "$TMP/$1.out"; }
seconds=$(awk -v ns=$(( $(date +%s%N) - started )) 'BEGIN { printf "%.1f", ns / 1e9 }')
[ "$status" = 0 ] && verdict=passed || verdict=FAILED
say "$verdict in ${seconds}s: plpgsql_check $plpgsql_check_version: $(value plpgsql plpgsql) PL/pgSQL functions checked," \
  "$(value plpgsql sql) LANGUAGE sql validated by PostgreSQL only, $(value plpgsql errors) errors," \
  "$(value plpgsql unaccepted) warnings open, $(value plpgsql accepted) accepted;" \
  "squawk $(value squawk version): $(value squawk files) migrations, $(value squawk hidden) findings hidden by $(value squawk ignores) rule ignores with a why;" \
  "$(cat "$TMP/statements.out")"
exit "$status"
