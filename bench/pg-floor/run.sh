#!/usr/bin/env bash
# PostgreSQL's floor for Herald's SMS job next to the Go peer's (issue 48): creates the scratch
# database herald_floor on the project's PostgreSQL, migrates it with Herald's real schema
# (heraldctl migrate) and the Go peer's table, runs each pgbench script for FLOOR_SECONDS
# (-n -M prepared -c 2 -j 2) after a FLOOR_WARM-second warm-up, FLOOR_REPEATS times alternating the variants, and prints PostgreSQL's
# CPU per job (every process of the postmaster's tree, as herald-bench's CPUMeter counts it).
# Drops herald_floor at the end (FLOOR_KEEP=1 keeps it).
#
#   bench/pg-floor/run.sh                    # from /work/main (or anywhere): all variants, 30 s, 2 repeats
#   FLOOR_VARIANTS="a c" FLOOR_SECONDS=10 FLOOR_REPEATS=1 bench/pg-floor/run.sh
#
# Needs the servers of `scripts/services.sh start` and a built .build/debug/heraldctl (or
# HERALDCTL=path). Starts and stops nothing else; other users of the same PostgreSQL show up in
# the "other" column (their live backends' CPU) and can only be excluded by running on a quiet machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
SECONDS_PER_RUN="${FLOOR_SECONDS:-30}"
REPEATS="${FLOOR_REPEATS:-2}"
WARM="${FLOOR_WARM:-5}"
VARIANTS="${FLOOR_VARIANTS:-a b c b_split c_split b_lean c_lean g}"
HERALDCTL="${HERALDCTL:-$root/.build/debug/heraldctl}"
DB=herald_floor

eval "$(scripts/services.sh env)"
server="${HERALD_DATABASE_URL%/*}"
tls="sslmode=verify-full&sslrootcert=${HERALD_DATABASE_TLS_CA_FILE}"
[ -n "${HERALD_DATABASE_TLS_CA_FILE:-}" ] || tls="sslmode=prefer"
url="$server/$DB?$tls"
admin="$server/postgres?$tls"
work="$(mktemp -d /tmp/pg-floor.XXXXXX)"
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }

echo "== database $DB (scratch work in $work)"
psql -X -q -v ON_ERROR_STOP=1 "$admin" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
[ "${FLOOR_KEEP:-0}" = 1 ] || trap 'psql -X -q "$admin" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true' EXIT
HERALD_DATABASE_URL="$server/$DB" "$HERALDCTL" migrate >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log"; exit 1; }
psql_q -f bench/peers/go/schema.sql
# Every statement here reads by key, as Herald's own functions do (issue 31: SET enable_seqscan
# off): a generic plan made on a table still empty must not scan it once it holds rows.
psql_q -c "ALTER DATABASE $DB SET enable_seqscan = off"
postmaster="$(head -1 "$(psql -X -tA "$url" -c "SHOW data_directory")/postmaster.pid")"
tick="$(getconf CLK_TCK)"
echo "== PostgreSQL $(psql -X -tA "$url" -c 'SHOW server_version'), postmaster $postmaster; $(psql -X -tA "$url" -c "SELECT string_agg(name || '=' || setting, ' ') FROM pg_settings WHERE name IN ('fsync','synchronous_commit','full_page_writes','shared_buffers','max_wal_size','checkpoint_timeout','autovacuum','ssl')")"

TRIGGERS_OFF="ALTER TABLE herald.sms_verifications DISABLE TRIGGER sms_verifications_fraud_guard_sent,
    DISABLE TRIGGER sms_verifications_let_through_written, DISABLE TRIGGER sms_verifications_let_through_ended;
  ALTER TABLE herald.sms_fraud_marks DISABLE TRIGGER sms_fraud_marks_let_through;"
TRIGGERS_ON="${TRIGGERS_OFF//DISABLE/ENABLE}"

script_of() {
  case "$1" in
    a) echo "$here/a_go.sql" ;;
    b|b_lean) echo "$here/b_herald.sql" ;;
    c) echo "$here/c_controls.sql" ;;
    c_lean) echo "$here/c_lean.sql" ;;
    g) echo "$here/g_data.sql" ;;
    b_split|c_split)
      # The same statements, committed where Herald's guarantees need it (`-- @split`).
      sed 's/^-- @split$/COMMIT;\nBEGIN;/' "$(script_of "${1%_split}")" >"$work/$1.sql"
      echo "$work/$1.sql" ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
}

# Jobs done so far: the Go peer's rows marked sent; Herald's send attempts (one per job here).
count_jobs() {
  case "$1" in
    a) psql -X -tA "$url" -c "SELECT count(*) FROM peer_verifications WHERE status = 'sent'" ;;
    g) echo 0 ;;
    *) psql -X -tA "$url" -c "SELECT count(*) FROM herald.sms_send_attempts" ;;
  esac
}

results="$work/results.tsv"
: >"$results"
for repeat in $(seq 1 "$REPEATS"); do
  for v in $VARIANTS; do
    script="$(script_of "$v")"
    case "$v" in *_lean) psql_q -c "$TRIGGERS_OFF" ;; *) psql_q -c "$TRIGGERS_ON" ;; esac
    # Every run starts from empty tables (as the Go peer's `prepare` does), warmed for
    # FLOOR_WARM seconds by the same script, vacuumed and analyzed (plans made on tables that
    # hold rows), after a checkpoint.
    psql_q -c "TRUNCATE peer_verifications, herald.job_runs, herald.event_outbox, herald.sms_codes, herald.sms_verifications,
                 herald.sms_send_attempts, herald.sms_rate_counters, herald.sms_guess_failures, herald.sms_fraud_marks,
                 herald.sms_fraud_counts, herald.sms_fraud_let_through, herald.sms_fraud_pauses, herald.sms_known_numbers CASCADE"
    pgbench -n -M prepared -c 2 -j 2 -T "$WARM" -f "$script" "$url" >"$work/$v.$repeat.warm" 2>&1 || { cat "$work/$v.$repeat.warm"; exit 1; }
    psql_q -c "VACUUM ANALYZE" -c "CHECKPOINT"
    count_before="$(count_jobs "$v")"
    sleep 1
    before="$(python3 "$here/pgcpu.py" "$postmaster" "$DB")"
    /usr/bin/time -f "%U %S" -o "$work/time" \
      pgbench -n -M prepared -r -c 2 -j 2 -T "$SECONDS_PER_RUN" -f "$script" "$url" >"$work/$v.$repeat.out" 2>"$work/$v.$repeat.err" \
      || { cat "$work/$v.$repeat.err"; exit 1; }
    after="$(python3 "$here/pgcpu.py" "$postmaster" "$DB")"
    xacts="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$v.$repeat.out")"
    tps="$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/$v.$repeat.out")"
    failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/$v.$repeat.out")"
    jobs=$(( $(count_jobs "$v") - count_before ))
    [ "$v" != g ] || jobs=$((xacts * 16))
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$v" "$repeat" "$xacts" "$tps" "$jobs" "${failed:-0}" "$before" "$after" "$(cat "$work/time")" >>"$results"
    python3 - "$results" "$tick" "$SECONDS_PER_RUN" <<'PY'
import sys
v, rep, xacts, tps, jobs, failed, before, after, times = open(sys.argv[1]).read().strip().split("\n")[-1].split("\t")
tick, secs = int(sys.argv[2]), float(sys.argv[3])
b, a = [int(x) for x in before.split()], [int(x) for x in after.split()]
d = [y - x for x, y in zip(b, a)]
jobs = int(jobs)
ms = lambda ticks: ticks / tick * 1000 / max(jobs, 1)
pgb = sum(float(x) for x in times.split()) * 1000 / max(jobs, 1)
print(f"{v:8s} #{rep}  {int(xacts):7d} xacts {float(tps):8.1f} tps  {jobs:7d} jobs {jobs / secs:7.0f} jobs/s  "
      f"PG {ms(d[0]):.3f} ms/job (backends {ms(d[1]):.3f}, aux {ms(d[3]):.3f}, exited {ms(d[4]):.3f}, other dbs {ms(d[2]):.3f})  "
      f"machine {ms(d[5]):.3f}  pgbench {pgb:.3f}  failed {failed}", flush=True)
PY
  done
done

echo
echo "== per-statement latencies (pgbench -r, last repeat) in $work/*.out"
python3 - "$results" "$tick" "$SECONDS_PER_RUN" <<'PY'
import sys
from collections import defaultdict
tick, secs = int(sys.argv[2]), float(sys.argv[3])
runs = defaultdict(list)
for line in open(sys.argv[1]):
    v, rep, xacts, tps, jobs, failed, before, after, times = line.rstrip("\n").split("\t")
    d = [y - x for x, y in zip(map(int, before.split()), map(int, after.split()))]
    runs[v].append((int(jobs), float(tps), d[0] / tick * 1000 / max(int(jobs), 1), d[2] / tick * 1000 / max(int(jobs), 1)))
print("| variant | PG CPU ms/job (each run) | mean | ÷ a | jobs/s (each run) | pgbench tps (each run) | other dbs ms/job |")
print("| --- | --- | ---: | ---: | --- | --- | --- |")
base = sum(r[2] for r in runs["a"]) / len(runs["a"]) if runs.get("a") else None
for v, rs in runs.items():
    mean = sum(r[2] for r in rs) / len(rs)
    ratio = f"{mean / base:.2f}" if base else "-"
    print(f"| {v} | {' · '.join(f'{r[2]:.3f}' for r in rs)} | {mean:.3f} | {ratio} | "
          f"{' · '.join(f'{r[0] / secs:.0f}' for r in rs)} | {' · '.join(f'{r[1]:.0f}' for r in rs)} | {' · '.join(f'{r[3]:.3f}' for r in rs)} |")
PY
