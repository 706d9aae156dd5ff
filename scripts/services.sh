#!/usr/bin/env bash
# Starts, stops and inspects the local servers Herald needs (RabbitMQ, PostgreSQL, Kannel, SMTP),
# as plain processes with their data under $HERALD_RUN_DIR (default: ./.run), on
# loopback only. Used by `make run`, `make test` and the disruptive integration tests.
#
#   scripts/services.sh install            apt-get what is missing (Debian)
#   scripts/services.sh install-bench      the same for what only `make bench` needs (BENCH_APT_PACKAGES)
#   scripts/services.sh start|stop|status  all servers (PostgreSQL, RabbitMQ, Kannel, SMTP)
#   scripts/services.sh start-kannel|stop-kannel
#   scripts/services.sh start-smtp|stop-smtp
#   scripts/services.sh start-rabbitmq|stop-rabbitmq|restart-rabbitmq
#   scripts/services.sh pause-rabbitmq|resume-rabbitmq   SIGSTOP/SIGCONT the broker (make chaos)
#   scripts/services.sh start-postgres|stop-postgres [immediate]
#   scripts/services.sh env                print HERALD_AMQP_URL, HERALD_DATABASE_URL, HERALD_DATABASE_TLS_CA_FILE (overrides)
#                                          and the HERALD_DEV_* values of these servers (no key reads them)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${HERALD_RUN_DIR:-$ROOT/.run}"
PG_PORT="${HERALD_PG_PORT:-55432}"
AMQP_PORT="${HERALD_AMQP_PORT:-55672}"
AMQP_TLS_PORT="${HERALD_AMQP_TLS_PORT:-$((AMQP_PORT - 1))}"
DIST_PORT="${HERALD_AMQP_DIST_PORT:-55673}"
RABBIT_NODE="${HERALD_RABBIT_NODE:-herald-$AMQP_PORT@localhost}"
# Kannel: smsbox's sendsms on KANNEL_PORT; bearerbox admin +1, smsbox link +2, fake SMSC +3,
# the refusing SMSC's (unused) MO port +4.
KANNEL_PORT="${HERALD_KANNEL_PORT:-$((AMQP_PORT + 10))}"
# The numbers Kannel accepts and then reports undelivered (its refusing SMSC, below): this
# prefix, +1 650 555 0100–0199 being a range for fiction.
KANNEL_UNDELIVERED=+1650555
# SMTP test server (scripts/smtp-server.py): plain/STARTTLS on SMTP_PORT, implicit TLS +1.
SMTP_PORT="${HERALD_SMTP_PORT:-$((AMQP_PORT + 20))}"
SMTP_TLS_PORT="${HERALD_SMTP_TLS_PORT:-$((SMTP_PORT + 1))}"

# librabbitmq-dev and libphonenumber-dev: the C libraries the build links (AMQP, CPhoneNumber).
# systemd (systemd-analyze), prometheus (promtool) and python3-venv: scripts/check-deploy.sh.
# postgresql-15-plpgsql-check: scripts/lint-sql.sh (15: Debian 12's PostgreSQL, the one `postgresql` installs).
# iptables: scripts/cluster.sh's partitions (make chaos-cluster).
# faketime: scripts/test-later.sh, the tests a year later (make test's last step, make test-later).
# default-jre-headless: the Java that runs openapi-generator (scripts/test-generators.sh, make test's generators step).
APT_PACKAGES=(rabbitmq-server librabbitmq-dev libphonenumber-dev postgresql postgresql-client kannel kannel-extras python3-aiosmtpd python3-jsonschema openssl curl pkg-config systemd prometheus python3-venv postgresql-15-plpgsql-check iptables faketime default-jre-headless)
# What only `make bench` needs, installed by `install-bench` (the Makefile's bench target), never by
# make run or make test:
# wrk: the HTTP load of the herald-api part (BENCH_ONLY=api).
# golang-go, golang-github-rabbitmq-amqp091-go-dev, golang-github-jackc-pgx-v4-dev: the Go peer
# (bench/peers/go, BENCH_ONLY=peer), built by scripts/bench.sh in GOPATH mode on Debian's Go libraries.
BENCH_APT_PACKAGES=(wrk golang-go golang-github-rabbitmq-amqp091-go-dev golang-github-jackc-pgx-v4-dev)

log() { printf '[services] %s\n' "$*" >&2; }

# close_inherited_fds
# shellcheck source=scripts/lib/servers.sh
source "$ROOT/scripts/lib/servers.sh"

# apt_install PACKAGE…: apt-get those of them that are missing (APT_INSTALLED=1 when there were some).
APT_INSTALLED=0
apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  log "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # policy-rc.d keeps Debian from starting system-wide daemons we do not want.
  $sudo env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  APT_INSTALLED=1
}

install() {
  apt_install "${APT_PACKAGES[@]}"
  [ "$APT_INSTALLED" = 1 ] || return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Debian starts a system PostgreSQL/RabbitMQ where it can; we run our own.
  $sudo service rabbitmq-server stop >/dev/null 2>&1 || true
  # Its port mapper stays behind, listening on every interface; ours starts on loopback.
  epmd -kill >/dev/null 2>&1 || true
  $sudo service prometheus stop >/dev/null 2>&1 || true
}

# ---------- PostgreSQL ----------
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1; }
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# As root, PostgreSQL runs as the postgres user, which must be able to pass through every
# directory above its data (a clone in `mktemp -d` is 0700 root). Grant only that: o+x,
# traverse without listing, on the directories that lack it, and say so.
pg_can_reach() {
  [ "$(id -u)" -eq 0 ] || return 0
  runuser -u postgres -- test -x "$1" && return 0
  local dir="" part parts
  IFS=/ read -ra parts <<<"${1#/}"
  for part in "${parts[@]}"; do  # from / down, so each test sees its parents already open
    dir="$dir/$part"
    if ! runuser -u postgres -- test -x "$dir"; then
      chmod o+x "$dir" && log "let the postgres user pass through $dir (chmod o+x)"
    fi
  done
}
# dev_ca DIR CN SANS: a development CA (DIR/ca.pem) and a server certificate signed by it
# (DIR/server.pem, DIR/server.key) for the subject alternative names SANS, valid ten years.
# Keys are readable by their owner only (a server running as another user gets a chown).
dev_ca() {
  local dir="$1" cn="$2" sans="$3"
  mkdir -p "$dir"
  log "generating a development CA and server certificate in $dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$cn" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" >/dev/null 2>&1
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout "$dir/server.key" -out "$dir/server.csr" >/dev/null 2>&1
  printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' "$sans" >"$dir/server.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 3650 -extfile "$dir/server.ext" -out "$dir/server.pem" >/dev/null 2>&1
  rm -f "$dir/server.csr" "$dir/server.ext"
  chmod 600 "$dir/ca.key" "$dir/server.key"
}
# A development CA and a server certificate for localhost/127.0.0.1/::1 (made once), so the
# local PostgreSQL speaks TLS and Herald's default database.tls: require verifies it against
# "$RUN_DIR/postgres-tls/ca.pem" (database.tls_ca_file, exported by `env`).
pg_tls() {
  local dir="$RUN_DIR/postgres-tls"
  if [ ! -f "$dir/server.pem" ]; then
    command -v openssl >/dev/null 2>&1 || { log "openssl is missing: PostgreSQL cannot speak TLS (run: $0 install)"; exit 1; }
    dev_ca "$dir" "Herald dev PostgreSQL CA" 'DNS:localhost,IP:127.0.0.1,IP:::1'
  fi
  # PostgreSQL reads the key as the user it runs as, and refuses a key others can read.
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/server.key" "$dir/server.pem"
  chmod 755 "$dir"
}
# TLS settings in their own file, included from postgresql.conf (also into a data directory
# made before PostgreSQL had TLS here).
pg_tls_conf() {
  local data="$1" dir="$RUN_DIR/postgres-tls"
  cat >"$data/herald-tls.conf" <<CONF
ssl = on
ssl_cert_file = '$dir/server.pem'
ssl_key_file = '$dir/server.key'
ssl_min_protocol_version = 'TLSv1.2'
CONF
  [ "$(id -u)" -eq 0 ] && chown postgres: "$data/herald-tls.conf"
  grep -q "^include_if_exists = 'herald-tls.conf'" "$data/postgresql.conf" \
    || echo "include_if_exists = 'herald-tls.conf'" >>"$data/postgresql.conf"
}
# pg_stat_statements preloaded (make bench's BENCH_STATEMENTS=1, docs/benchmarks.md), in its own
# file included from postgresql.conf (also into a data directory made before it was). Tracking is
# off (none: the hooks return at once) until the bench turns it on for its database. A server
# already running loads the library only when restarted: `start` says so.
pg_stats_conf() {
  local data="$1" bin="$2"
  if [ -f "$bin/../lib/pg_stat_statements.so" ]; then
    cat >"$data/herald-stats.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = 'none'
CONF
  else
    log "pg_stat_statements is not installed with $bin: BENCH_STATEMENTS=1 will not work"
    : >"$data/herald-stats.conf"
  fi
  [ "$(id -u)" -eq 0 ] && chown postgres: "$data/herald-stats.conf"
  grep -q "^include_if_exists = 'herald-stats.conf'" "$data/postgresql.conf" \
    || echo "include_if_exists = 'herald-stats.conf'" >>"$data/postgresql.conf"
}
start_postgres() {
  local bin; bin="$(pg_bin)"
  [ -n "$bin" ] || { log "PostgreSQL is not installed (run: $0 install)"; exit 1; }
  local data="$RUN_DIR/postgres"
  mkdir -p "$RUN_DIR"
  pg_can_reach "$RUN_DIR"
  pg_tls
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$data"
    chmod 700 "$data"
    as_pg "$bin/initdb" -D "$data" -U herald --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$data'
# make test runs ~240 tests at once, each harness and worker process with its own pool
# (database.max_connections 16): 300 ran out ("sorry, too many clients already").
max_connections = 1000
fsync = off
full_page_writes = off
shared_buffers = 256MB
log_min_messages = warning
CONF
  fi
  pg_tls_conf "$data"
  pg_stats_conf "$data" "$bin"
  if ! as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$PG_PORT (TLS)"
    ( close_inherited_fds; as_pg "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start ) >/dev/null
  elif [ "$(as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U herald -d postgres -tAc 'SHOW ssl')" != on ]; then
    # Started before it had TLS here: ssl is read again on reload, no restart needed.
    log "turning TLS on in the running PostgreSQL (reload)"
    as_pg "$bin/pg_ctl" -D "$data" reload >/dev/null
    sleep 1
    [ "$(as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U herald -d postgres -tAc 'SHOW ssl')" = on ] \
      || { log "PostgreSQL did not turn TLS on; see $data/server.log"; exit 1; }
  fi
  if [ -s "$data/herald-stats.conf" ] \
    && [[ "$(as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U herald -d postgres -tAc 'SHOW shared_preload_libraries')" != *pg_stat_statements* ]]; then
    log "PostgreSQL runs without pg_stat_statements (started before it was configured): restart it for BENCH_STATEMENTS=1 ($0 stop && $0 start)"
  fi
  # herald for make run, herald_test for make test, herald_bench for make bench, herald_chaos for make chaos,
  # herald_later for make test's year-later step (scripts/test-later.sh).
  local db
  for db in herald herald_test herald_bench herald_chaos herald_later; do
    as_pg "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U herald -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1 \
      || as_pg "$bin/createdb" -h 127.0.0.1 -p "$PG_PORT" -U herald "$db"
  done
}
stop_postgres() {
  local bin; bin="$(pg_bin)"; local data="$RUN_DIR/postgres"
  [ -f "$data/PG_VERSION" ] || return 0
  as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1 || return 0
  log "stopping PostgreSQL (${1:-fast})"
  as_pg "$bin/pg_ctl" -D "$data" -m "${1:-fast}" -w stop >/dev/null
}

# ---------- RabbitMQ ----------
rabbit_env() {
  local base="$RUN_DIR/rabbitmq"
  export HOME="$base/home"
  export RABBITMQ_NODENAME="$RABBIT_NODE"
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
  export RABBITMQ_NODE_PORT="$AMQP_PORT"
  export RABBITMQ_DIST_PORT="$DIST_PORT"
  export RABBITMQ_MNESIA_BASE="$base/mnesia"
  export RABBITMQ_LOG_BASE="$base/log"
  export RABBITMQ_PID_FILE="$base/rabbit.pid"
  export RABBITMQ_CONFIG_FILE="$base/rabbitmq"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$base/enabled_plugins"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$base/advanced.config"
  # Loopback only: the port mapper (epmd) and the node's distribution port too.
  export ERL_EPMD_ADDRESS=127.0.0.1
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
  export RABBITMQ_CTL_DIST_PORT_MIN=$((DIST_PORT + 10)) RABBITMQ_CTL_DIST_PORT_MAX=$((DIST_PORT + 30))
  mkdir -p "$HOME" "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
  [ -f "$RABBITMQ_ENABLED_PLUGINS_FILE" ] || echo '[].' >"$RABBITMQ_ENABLED_PLUGINS_FILE"
  [ -f "$RABBITMQ_ADVANCED_CONFIG_FILE" ] || echo '[].' >"$RABBITMQ_ADVANCED_CONFIG_FILE"
  cat >"$base/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
loopback_users = none
log.console = false
log.file.level = warning
vm_memory_high_watermark.relative = 0.3
disk_free_limit.absolute = 50MB
# The broker refuses larger publishes (RabbitMQ's default is 128 MiB): twice the top of
# runner.max_message_bytes' range (16 MiB), as in deploy/rabbitmq/rabbitmq.conf.
max_message_size = 33554432
CONF
  if [ -f "$base/tls/server.pem" ]; then
    cat >>"$base/rabbitmq.conf" <<CONF
listeners.ssl.default = 127.0.0.1:$AMQP_TLS_PORT
ssl_options.cacertfile = $base/tls/ca.pem
ssl_options.certfile = $base/tls/server.pem
ssl_options.keyfile = $base/tls/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
CONF
  fi
}
# A throwaway CA and a server certificate for 127.0.0.1/localhost (made once), so the
# amqps listener on $AMQP_TLS_PORT can be tested. Clients trust "$RUN_DIR/rabbitmq/tls/ca.pem".
rabbit_tls() {
  local dir="$RUN_DIR/rabbitmq/tls"
  [ -f "$dir/server.pem" ] && return 0
  command -v openssl >/dev/null 2>&1 || { log "openssl missing: no TLS listener"; return 0; }
  dev_ca "$dir" "Herald dev CA" 'DNS:localhost,IP:127.0.0.1'
}
rabbitmqctl_() { /usr/lib/rabbitmq/bin/rabbitmqctl -n "$RABBIT_NODE" "$@"; }
rabbit_running() { rabbit_env; rabbitmqctl_ -q status >/dev/null 2>&1; }
start_rabbitmq() {
  [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || { log "RabbitMQ is not installed (run: $0 install)"; exit 1; }
  rabbit_tls
  rabbit_env
  if rabbit_running; then return 0; fi
  log "starting RabbitMQ on 127.0.0.1:$AMQP_PORT"
  # Started through setsid so it outlives the shell that asked for it.
  ( close_inherited_fds; exec setsid /usr/lib/rabbitmq/bin/rabbitmq-server ) >"$RABBITMQ_LOG_BASE/stdout.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 120); do
    if rabbitmqctl_ -q await_startup --timeout 2 >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "RabbitMQ did not start; see $RABBITMQ_LOG_BASE"; tail -n 30 "$RABBITMQ_LOG_BASE/stdout.log" >&2 || true
  exit 1
}
stop_rabbitmq() {
  rabbit_env
  rabbit_running || return 0
  log "stopping RabbitMQ"
  rabbitmqctl_ -q stop >/dev/null 2>&1 || true
  local i
  for i in $(seq 1 60); do rabbit_running || return 0; sleep 0.5; done
}

# Local HMAC keys for the stored secrets (codes, link codes, push secrets): made once per
# run directory, never committed. Production gives its own (docs/operations.md).
dev_secrets() {
  local dir="$RUN_DIR/secrets"
  if [ ! -s "$dir/hmac-keys" ]; then
    mkdir -p "$dir"; chmod 700 "$dir"
    (umask 077; echo "dev1:$(openssl rand -base64 32)" >"$dir/hmac-keys")
  fi
}

# Kannel (Debian's bearerbox + smsbox) with its fake SMSC (kannel-extras' fakesmsc), which
# writes every message it receives to $RUN_DIR/kannel/fakesmsc.out: a real SMS gateway on
# loopback, for the SMS worker's Kannel provider.
kannel_dir() { echo "$RUN_DIR/kannel"; }
kannel_running() { curl -s -o /dev/null "http://127.0.0.1:$KANNEL_PORT/cgi-bin/sendsms" 2>/dev/null; }
start_kannel() {
  local dir; dir="$(kannel_dir)"
  if kannel_running; then return 0; fi
  mkdir -p "$dir/store"
  cat >"$dir/kannel.conf" <<CONF
group = core
admin-port = $((KANNEL_PORT + 1))
admin-password = herald-dev
admin-interface = 127.0.0.1
smsbox-port = $((KANNEL_PORT + 2))
smsbox-interface = 127.0.0.1
box-allow-ip = 127.0.0.1
log-file = "$dir/bearerbox.log"
log-level = 1
store-type = spool
store-location = "$dir/store"

group = smsc
smsc = fake
smsc-id = fake
host = 127.0.0.1
port = $((KANNEL_PORT + 3))
connect-allow-ip = 127.0.0.1
denied-prefix = "$KANNEL_UNDELIVERED"

# An SMSC that refuses every message it is given: an HTTP SMSC whose "operator" is this smsbox's
# own sendsms under credentials it does not know (403). Kannel accepts the message (202), then
# reports it undelivered (DLR 16, "NACK/Authorization failed"): the real path of an SMS an
# operator rejects, for the numbers routed here ($KANNEL_UNDELIVERED: make run's fallback demo).
group = smsc
smsc = http
smsc-id = refusing
system-type = kannel
send-url = "http://127.0.0.1:$KANNEL_PORT/cgi-bin/sendsms"
smsc-username = refused
smsc-password = refused
port = $((KANNEL_PORT + 4))
connect-allow-ip = 127.0.0.1
allowed-prefix = "$KANNEL_UNDELIVERED"

group = smsbox
bearerbox-host = 127.0.0.1
bearerbox-port = $((KANNEL_PORT + 2))
sendsms-port = $KANNEL_PORT
sendsms-interface = 127.0.0.1
global-sender = 12345
log-file = "$dir/smsbox.log"
log-level = 1

group = sendsms-user
username = herald
password = herald-dev
concatenation = true
max-messages = 3

group = sms-service
keyword = default
text = "No service"
CONF
  log "starting Kannel (sendsms on 127.0.0.1:$KANNEL_PORT, fake SMSC on $((KANNEL_PORT + 3)))"
  ( close_inherited_fds; exec /usr/sbin/bearerbox "$dir/kannel.conf" ) >"$dir/bearerbox.out" 2>&1 &
  echo $! >"$dir/bearerbox.pid"
  sleep 0.5
  ( close_inherited_fds; exec /usr/sbin/smsbox "$dir/kannel.conf" ) >"$dir/smsbox.out" 2>&1 &
  echo $! >"$dir/smsbox.pid"
  ( close_inherited_fds; exec /usr/lib/kannel/test/fakesmsc -H 127.0.0.1 -r $((KANNEL_PORT + 3)) -i 0.1 -m 0 "0 0 text x" ) >>"$dir/fakesmsc.out" 2>&1 &
  echo $! >"$dir/fakesmsc.pid"
  local i
  for i in $(seq 1 60); do
    if kannel_running && grep -q "Connecting to" "$dir/fakesmsc.out" 2>/dev/null; then return 0; fi
    sleep 0.25
  done
  log "Kannel did not start; see $dir/*.out"
  exit 1
}
stop_kannel() {
  local dir pid name; dir="$(kannel_dir)"
  for name in fakesmsc smsbox bearerbox; do
    if [ -f "$dir/$name.pid" ]; then
      pid=$(cat "$dir/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$name.pid"
    fi
  done
}

# A real SMTP server (Debian's python3-aiosmtpd, scripts/smtp-server.py) for the email
# worker: STARTTLS and implicit TLS with a self-signed certificate made once, AUTH PLAIN/LOGIN
# with a generated password, messages stored in $RUN_DIR/smtp/maildir; recipients' local
# parts pick 421/451/550 answers, and $RUN_DIR/smtp/mode switches every recipient to 451,
# 421 or a hang at run time (see the script).
smtp_dir() { echo "$RUN_DIR/smtp"; }
smtp_running() { (exec 3<>"/dev/tcp/127.0.0.1/$SMTP_PORT") 2>/dev/null; }
smtp_files() {
  local dir; dir="$(smtp_dir)"
  mkdir -p "$dir/tls" "$dir/maildir"
  if [ ! -s "$dir/password" ]; then
    (umask 077; openssl rand -hex 16 >"$dir/password")
  fi
  if [ ! -f "$dir/tls/server.pem" ]; then
    log "generating a self-signed certificate for the SMTP server in $dir/tls"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" \
      -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -addext "basicConstraints=critical,CA:TRUE" \
      -keyout "$dir/tls/server.key" -out "$dir/tls/server.pem" >/dev/null 2>&1
    chmod 600 "$dir/tls/server.key"
  fi
}
start_smtp() {
  local dir; dir="$(smtp_dir)"
  if smtp_running; then return 0; fi
  smtp_files
  rm -f "$dir/mode"
  log "starting the SMTP server (plain/STARTTLS on 127.0.0.1:$SMTP_PORT, implicit TLS on $SMTP_TLS_PORT)"
  ( close_inherited_fds; exec /usr/bin/python3 "$ROOT/scripts/smtp-server.py" --port "$SMTP_PORT" --tls-port "$SMTP_TLS_PORT" \
      --cert "$dir/tls/server.pem" --key "$dir/tls/server.key" --password-file "$dir/password" --maildir "$dir/maildir" \
      --mode-file "$dir/mode" \
  ) >"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$dir/server.pid"
  local i
  for i in $(seq 1 60); do
    if smtp_running; then return 0; fi
    sleep 0.25
  done
  log "the SMTP server did not start; see $dir/server.log"; tail -n 20 "$dir/server.log" >&2 || true
  exit 1
}
stop_smtp() {
  local dir pid; dir="$(smtp_dir)"
  [ -f "$dir/server.pid" ] || return 0
  pid=$(cat "$dir/server.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$dir/server.pid"
}

# What `eval "$(scripts/services.sh env)"` sets. Only three are configuration overrides:
# amqp.url, database.url and database.tls_ca_file (these servers' addresses, and the CA of
# the local PostgreSQL's certificate, which database.tls: require verifies). Everything else is for scripts and
# tests and is named HERALD_DEV_*, a prefix no configuration key has (HERALD_<KEY> overrides
# key <key>, docs/configuration.md), so nothing reaches a worker unless a script passes it on
# under the configuration's name (scripts/run-local.sh: the dev HMAC keys and outbox spool).
print_env() {
  dev_secrets
  cat <<ENV
export HERALD_AMQP_URL=amqp://guest:guest@127.0.0.1:$AMQP_PORT/%2f
export HERALD_DATABASE_URL=postgres://herald@127.0.0.1:$PG_PORT/herald
export HERALD_DATABASE_TLS_CA_FILE=$RUN_DIR/postgres-tls/ca.pem
export HERALD_DEV_HMAC_KEYS_FILE=$RUN_DIR/secrets/hmac-keys
export HERALD_DEV_OUTBOX_DIRECTORY=$RUN_DIR/outbox
export HERALD_DEV_KANNEL_URL=http://127.0.0.1:$KANNEL_PORT/cgi-bin/sendsms
export HERALD_DEV_KANNEL_SMSC_LOG=$RUN_DIR/kannel/fakesmsc.out
export HERALD_DEV_KANNEL_UNDELIVERED=$KANNEL_UNDELIVERED
export HERALD_DEV_AMQP_TLS_URL=amqps://guest:guest@localhost:$AMQP_TLS_PORT/%2f
export HERALD_DEV_AMQP_TLS_CA=$RUN_DIR/rabbitmq/tls/ca.pem
export HERALD_DEV_SMTP_HOST=127.0.0.1
export HERALD_DEV_SMTP_PORT=$SMTP_PORT
export HERALD_DEV_SMTP_TLS_PORT=$SMTP_TLS_PORT
export HERALD_DEV_SMTP_USERNAME=herald
export HERALD_DEV_SMTP_PASSWORD_FILE=$RUN_DIR/smtp/password
export HERALD_DEV_SMTP_CA=$RUN_DIR/smtp/tls/server.pem
export HERALD_DEV_SMTP_MAILDIR=$RUN_DIR/smtp/maildir
export HERALD_DEV_SMTP_MODE_FILE=$RUN_DIR/smtp/mode
ENV
}

cmd="${1:-status}"; shift || true
case "$cmd" in
  install) install ;;
  install-bench) apt_install "${BENCH_APT_PACKAGES[@]}" ;;
  start) start_postgres; start_rabbitmq; start_kannel; start_smtp ;;
  stop) stop_smtp; stop_kannel; stop_rabbitmq; stop_postgres ;;
  status)
    if as_pg "$(pg_bin)/pg_ctl" -D "$RUN_DIR/postgres" status >/dev/null 2>&1; then echo "postgres: running on $PG_PORT"; else echo "postgres: stopped"; fi
    if rabbit_running; then echo "rabbitmq: running on $AMQP_PORT"; else echo "rabbitmq: stopped"; fi
    if kannel_running; then echo "kannel: sendsms on $KANNEL_PORT"; else echo "kannel: stopped"; fi
    if smtp_running; then echo "smtp: on $SMTP_PORT (implicit TLS $SMTP_TLS_PORT)"; else echo "smtp: stopped"; fi ;;
  start-postgres) start_postgres ;;
  stop-postgres) stop_postgres "${1:-fast}" ;;
  start-rabbitmq) start_rabbitmq ;;
  start-kannel) start_kannel ;;
  stop-kannel) stop_kannel ;;
  start-smtp) start_smtp ;;
  stop-smtp) stop_smtp ;;
  stop-rabbitmq) stop_rabbitmq ;;
  restart-rabbitmq) stop_rabbitmq; start_rabbitmq ;;
  pause-rabbitmq) kill -STOP "$(cat "$RUN_DIR/rabbitmq/rabbit.pid")" ;;
  resume-rabbitmq) kill -CONT "$(cat "$RUN_DIR/rabbitmq/rabbit.pid")" ;;
  rabbitmqctl) rabbit_env; rabbitmqctl_ "$@" ;;
  env) print_env ;;
  *) echo "usage: $0 install|start|stop|status|start-postgres|stop-postgres [immediate]|start-rabbitmq|stop-rabbitmq|restart-rabbitmq|pause-rabbitmq|resume-rabbitmq|start-kannel|stop-kannel|start-smtp|stop-smtp|rabbitmqctl ARGS|env" >&2; exit 2 ;;
esac
