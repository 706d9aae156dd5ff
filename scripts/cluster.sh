#!/usr/bin/env bash
# A three-node RabbitMQ cluster and a PostgreSQL primary with a synchronous streaming standby,
# plain processes on loopback, data under $HERALD_RUN_DIR/cluster (default ./.run/cluster), to make
# the failures of Herald past one machine (issue 33) on one: a node lost, a network partition, a
# rolling restart, a database failover. Needs scripts/services.sh's packages, plus iptables
# (apt-get install -y iptables) and root for `partition`.
#
#   scripts/cluster.sh start|stop|status        everything (stop also heals a partition)
#   scripts/cluster.sh rabbit-start|rabbit-stop|rabbit-status|rabbit-urls
#   scripts/cluster.sh rabbit-kill N            kill -9 node N (1, 2 or 3)
#   scripts/cluster.sh rabbit-start-node N|rabbit-stop-node N
#   scripts/cluster.sh rabbit-leader QUEUE      the node leading quorum queue QUEUE
#   scripts/cluster.sh rabbit-rolling-restart   restart each node in turn, quorum queues kept online
#   scripts/cluster.sh partition N [SECONDS]    cut node N off from the other two (for SECONDS, then heal)
#   scripts/cluster.sh heal                     remove every partition rule
#   scripts/cluster.sh rabbit-unstick N         node N, still down after a heal, made to run (see below)
#   scripts/cluster.sh pg-start|pg-stop|pg-status|pg-urls [DB]
#   scripts/cluster.sh pg-kill-primary|pg-promote|pg-rebuild-standby
#
# RabbitMQ node N is herald-cN@127.0.0.1N: AMQP on 127.0.0.1:26672, 26682, 26692; Erlang
# distribution on the node's own loopback address (127.0.0.11, .12, .13), port AMQP+1, and
# from that address, so iptables can cut one node off by address and touch nothing else; CLI
# tools on AMQP+2..AMQP+9; a port mapper (epmd) of its own on 26670. A partition is noticed
# after 1 to 1.25 × NET_TICKTIME seconds (HERALD_CLUSTER_NET_TICKTIME; RabbitMQ's default is 60).
# PostgreSQL: data in pg-26432 and pg-26433, whichever is primary now; user herald, trust
# authentication, TLS with the self-signed certificate pg-tls/server.pem (its own CA).
# Every port here is below Linux's ephemeral range (32768-60999): one inside it can be held by
# any outgoing connection of the moment, and a node then fails to listen (it did, at 56682).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${HERALD_RUN_DIR:-$ROOT/.run}/cluster"
RABBIT=/usr/lib/rabbitmq/bin
EPMD_PORT=26670
NET_TICKTIME="${HERALD_CLUSTER_NET_TICKTIME:-10}"
PG_PORTS=(26432 26433)
TIMEOUT=120

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# close_inherited_fds
# shellcheck source=scripts/lib/servers.sh
source "$ROOT/scripts/lib/servers.sh"
# quiet COMMAND: its output only if it fails.
quiet() { local out; out=$("$@" 2>&1) || { printf '%s\n' "$out" >&2; return 1; }; }
# wait_gone PID [SECONDS]: until process PID has exited; kill -9 after SECONDS (default 60).
wait_gone() {
  local pid="$1" deadline=$((SECONDS + ${2:-60}))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then log "killing $pid"; kill -9 "$pid" 2>/dev/null || true; fi
    sleep 0.2
  done
}

# ---------- RabbitMQ ----------
node_name() { echo "herald-c$1@127.0.0.1$1"; }
amqp_port() { echo $((26662 + 10 * $1)); }
check_node() { [[ "$1" =~ ^[123]$ ]] || die "name a node: 1, 2 or 3"; }
rabbit_env() {
  local n="$1" amqp; amqp=$(amqp_port "$n")
  NODE_DIR="$DIR/rabbit-$n"
  export HOME="$DIR/home"  # one HOME, so one Erlang cookie, for the three nodes and the CLI
  export RABBITMQ_USE_LONGNAME=true RABBITMQ_NODENAME="herald-c$n@127.0.0.1$n" RABBITMQ_DIST_PORT=$((amqp + 1))
  export RABBITMQ_MNESIA_BASE="$NODE_DIR/mnesia" RABBITMQ_LOG_BASE="$NODE_DIR/log" RABBITMQ_PID_FILE="$NODE_DIR/rabbit.pid"
  export RABBITMQ_CONFIG_FILE="$NODE_DIR/rabbitmq" RABBITMQ_ENABLED_PLUGINS_FILE="$NODE_DIR/enabled_plugins"
  export RABBITMQ_ADVANCED_CONFIG_FILE="$NODE_DIR/advanced.config" ERL_EPMD_PORT=$EPMD_PORT
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1$n} -kernel inet_dist_connect_options [{ip,{127,0,0,1$n}}]"
  # The CLI is named after the node's host (rabbitmqcli-…@127.0.0.1N): other nodes reach it there.
  export RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1$n}"
  export RABBITMQ_CTL_DIST_PORT_MIN=$((amqp + 2)) RABBITMQ_CTL_DIST_PORT_MAX=$((amqp + 9))
}
# tool NAME N ARGS: a RabbitMQ CLI tool (rabbitmqctl, rabbitmq-upgrade) on node N.
tool() { local t="$1" n="$2"; shift 2; ( rabbit_env "$n"; "$RABBIT/$t" -n "$RABBITMQ_NODENAME" "$@" ); }
ctl() { tool rabbitmqctl "$@"; }
# node_pid N: the pid of node N's Erlang VM, if it runs.
node_pid() {
  local f="$DIR/rabbit-$1/rabbit.pid" pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  grep -qa "RABBITMQ_NODENAME=$(node_name "$1")" "/proc/$pid/environ" 2>/dev/null && echo "$pid"
}
any_running_node() {
  local n
  for n in 1 2 3; do ctl "$n" -q await_startup --timeout 2 >/dev/null 2>&1 && { echo "$n"; return 0; }; done
  die "no RabbitMQ node is running"
}
start_epmd() {
  [ -s "$DIR/epmd.pid" ] && kill -0 "$(cat "$DIR/epmd.pid")" 2>/dev/null && return 0
  ( close_inherited_fds; exec setsid epmd -port "$EPMD_PORT" -address 127.0.0.1,127.0.0.11,127.0.0.12,127.0.0.13 ) >"$DIR/epmd.log" 2>&1 </dev/null &
  echo $! >"$DIR/epmd.pid"
  until (exec 3<>"/dev/tcp/127.0.0.1/$EPMD_PORT") 2>/dev/null; do sleep 0.1; done
}
stop_epmd() {
  [ -s "$DIR/epmd.pid" ] || return 0
  kill "$(cat "$DIR/epmd.pid")" 2>/dev/null && wait_gone "$(cat "$DIR/epmd.pid")" 10
  rm -f "$DIR/epmd.pid"
}
launch_node() (  # node N's VM, unless it runs; await_node waits for its broker
  n="$1"
  node_pid "$n" >/dev/null && exit 0
  rabbit_env "$n"
  mkdir -p "$HOME" "$RABBITMQ_MNESIA_BASE" "$RABBITMQ_LOG_BASE"
  start_epmd
  if [ ! -s "$HOME/.erlang.cookie" ]; then
    (umask 077; openssl rand -hex 20 >"$HOME/.erlang.cookie"); chmod 400 "$HOME/.erlang.cookie"
  fi
  echo '[].' >"$RABBITMQ_ENABLED_PLUGINS_FILE"
  echo '[].' >"$RABBITMQ_ADVANCED_CONFIG_FILE"
  cat >"$NODE_DIR/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$(amqp_port "$n")
# guest may log in from afar: there is no afar, every listener is on loopback.
loopback_users = none
cluster_partition_handling = pause_minority
net_ticktime = $NET_TICKTIME
log.console = false
log.file.level = info
vm_memory_high_watermark.relative = 0.2
disk_free_limit.absolute = 50MB
max_message_size = 33554432
CONF
  log "starting $(node_name "$n") (amqp 127.0.0.1:$(amqp_port "$n"))"
  ( close_inherited_fds; exec setsid "$RABBIT/rabbitmq-server" ) >"$NODE_DIR/stdout.log" 2>&1 </dev/null &
)
await_node() {  # until node N's broker runs; fail after TIMEOUT, or after 15 s without its VM
  local n="$1" start=$SECONDS
  until ctl "$n" -q await_startup --timeout 5 >/dev/null 2>&1; do
    if [ $((SECONDS - start)) -ge $TIMEOUT ] || { [ $((SECONDS - start)) -ge 15 ] && ! node_pid "$n" >/dev/null; }; then
      tail -n 20 "$DIR/rabbit-$n/stdout.log" >&2 || true
      die "$(node_name "$n") did not start; see $DIR/rabbit-$n/log"
    fi
    sleep 0.5
  done
}
join_node() {  # node N into node 1's cluster, unless it is in it
  local n="$1" first; first=$(node_name 1)
  ctl "$n" -q cluster_status --formatter json | grep -q "\"$first\"" && return 0
  log "joining $(node_name "$n") to $first"
  quiet ctl "$n" stop_app
  quiet ctl "$n" join_cluster "$first"
  quiet ctl "$n" start_app
}
rabbit_start_node() { check_node "${1:-}"; launch_node "$1"; await_node "$1"; [ "$1" = 1 ] || join_node "$1"; }
rabbit_stop_node() {
  local pid
  check_node "${1:-}"
  pid=$(node_pid "$1") || return 0
  log "stopping $(node_name "$1")"
  ctl "$1" -q stop >/dev/null 2>&1 || true
  wait_gone "$pid"
}
rabbit_kill() {
  local pid
  check_node "${1:-}"
  pid=$(node_pid "$1") || die "$(node_name "$1") is not running"
  log "kill -9 $(node_name "$1") (pid $pid)"
  kill -9 "$pid" && wait_gone "$pid"
}
rabbit_start() {
  local n
  # All at once: a node that was not the last of its cluster to stop waits for the others.
  for n in 1 2 3; do launch_node "$n"; done
  for n in 1 2 3; do await_node "$n"; done
  for n in 2 3; do join_node "$n"; done
  rabbit_status
}
rabbit_stop() { local n; for n in 3 2 1; do rabbit_stop_node "$n"; done; stop_epmd; }
rabbit_status() {
  local n pid state
  for n in 1 2 3; do
    if ! pid=$(node_pid "$n"); then state=down
    elif ctl "$n" -q await_startup --timeout 2 >/dev/null 2>&1; then state="running (pid $pid)"
    else state="VM up, broker not running: booting, paused by pause_minority, or stopped (pid $pid)"
    fi
    echo "$(node_name "$n") amqp 127.0.0.1:$(amqp_port "$n"): $state"
  done
  n=$(any_running_node) || return 0
  # The membership and partitions parts of cluster_status, as node n sees them.
  ctl "$n" -q cluster_status | sed 's/\x1b\[[0-9;]*m//g' \
    | awk '/^(Disk Nodes|Running Nodes|Network Partitions)/ { on = 1 } /^(Versions|Maintenance|Alarms|Listeners)/ { on = 0 } on'
}
rabbit_leader() {
  local queue="${1:-}" n
  [ -n "$queue" ] || die "name a quorum queue"
  n=$(any_running_node)
  ctl "$n" -q list_queues name leader --no-table-headers | awk -v q="$queue" '$1 == q { print $2; found = 1 } END { exit !found }' \
    || die "no queue $queue"
}
rabbit_rolling_restart() {
  local n start
  for n in 1 2 3; do
    # Stopping the node must leave every quorum queue with a majority of its members online.
    tool rabbitmq-upgrade "$n" -q await_online_quorum_plus_one -t "$TIMEOUT" >/dev/null
    start=$SECONDS
    rabbit_stop_node "$n"
    rabbit_start_node "$n"
    # And its own members back online before the next node goes.
    tool rabbitmq-upgrade "$n" -q await_online_quorum_plus_one -t "$TIMEOUT" >/dev/null
    log "$(node_name "$n") restarted in $((SECONDS - start)) s"
  done
  rabbit_status
}
rabbit_urls() { echo "amqp://guest:guest@127.0.0.1:26672/,amqp://guest:guest@127.0.0.1:26682/,amqp://guest:guest@127.0.0.1:26692/"; }

# ---------- Partitions (iptables) ----------
# After a heal, a paused node can hang booting in Erlang's global:sync (RabbitMQ 3.10, OTP 25:
# once in ~15 partitions here): rabbit-stop-node N, then rabbit-start-node N.
# iptables-nft warns on every call while a legacy table exists too: harmless here.
ipt() { iptables "$@" 2> >(grep -v 'iptables-legacy tables present' >&2); }
# Each rule drops the traffic from one node's address to another's on the cluster's
# distribution ports only, and carries the comment herald-cluster (what heal removes).
partition_rule() {
  ipt -A INPUT -i lo -p tcp -s "$1" -d "$2" -m multiport --ports 26673,26683,26693 \
    -m comment --comment herald-cluster -j DROP
}
partition() {
  local n="${1:-}" seconds="${2:-}" m
  check_node "$n"
  command -v iptables >/dev/null || die "iptables is missing (apt-get install -y iptables)"
  heal
  [ -z "$seconds" ] || { trap heal EXIT; trap 'exit 130' INT TERM; }
  log "cutting $(node_name "$n") off from the other nodes${seconds:+ for $seconds s}"
  for m in 1 2 3; do
    [ "$m" = "$n" ] || { partition_rule "127.0.0.1$n" "127.0.0.1$m"; partition_rule "127.0.0.1$m" "127.0.0.1$n"; }
  done
  [ -z "$seconds" ] || { sleep "$seconds" & wait $!; }
}
# rabbit-unstick N: node N, down since a heal, made to run again. RabbitMQ 3.10 sometimes
# leaves a node that was cut off hanging in global:sync after the heal (seen once in ~15
# partitions, for more than 3 minutes): its peers still count it connected. Disconnecting it
# on each of them lets it finish; if it does not within 30 s, it is restarted (kill -9, start).
rabbit_unstick() {
  local n="${1:-}" m pid
  check_node "$n"
  ctl "$n" -q await_startup --timeout 2 >/dev/null 2>&1 && return 0
  for m in 1 2 3; do
    [ "$m" = "$n" ] || ctl "$m" -q eval "erlang:disconnect_node('$(node_name "$n")')." >/dev/null 2>&1 || true
  done
  log "$(node_name "$n") was stuck: disconnected on its peers"
  ctl "$n" -q await_startup --timeout 30 >/dev/null 2>&1 && { log "$(node_name "$n") runs again"; return 0; }
  log "$(node_name "$n") still stuck: restarting it"
  if pid=$(node_pid "$n"); then kill -9 "$pid" && wait_gone "$pid"; fi
  rabbit_start_node "$n"
}
heal() {
  command -v iptables >/dev/null || return 0
  local rules rule args
  rules=$(ipt -S INPUT | grep -- '--comment herald-cluster' || true)
  [ -z "$rules" ] || log "healing: removing the herald-cluster rules"
  while read -r rule; do
    [ -z "$rule" ] || { read -ra args <<<"${rule/#-A /-D }"; ipt "${args[@]}"; }
  done <<<"$rules"
  trap - EXIT INT TERM
}

# ---------- PostgreSQL ----------
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg_dir() { echo "$DIR/pg-$1"; }
pgctl() { local p="$1"; shift; as_pg "$PG_BIN/pg_ctl" -D "$(pg_dir "$p")" "$@" >/dev/null; }
pg_up() { [ -f "$(pg_dir "$1")/PG_VERSION" ] && pgctl "$1" status 2>/dev/null; }
other_port() { if [ "$1" = "${PG_PORTS[0]}" ]; then echo "${PG_PORTS[1]}"; else echo "${PG_PORTS[0]}"; fi; }
sql() { local port="$1"; shift; as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U herald -d postgres -tAc "$*"; }
pg_primary() {  # the port of the running primary
  local p
  for p in "${PG_PORTS[@]}"; do
    pg_up "$p" && [ "$(sql "$p" 'SELECT pg_is_in_recovery()')" = f ] && { echo "$p"; return 0; }
  done
  return 1
}
# As root, PostgreSQL runs as postgres, which must pass through every directory above its data.
pg_can_reach() {
  local dir="" part parts
  IFS=/ read -ra parts <<<"${1#/}"
  for part in "${parts[@]}"; do
    dir="$dir/$part"
    runuser -u postgres -- test -x "$dir" || { chmod o+x "$dir"; log "let the postgres user pass through $dir (chmod o+x)"; }
  done
}
pg_tls() {
  local dir="$DIR/pg-tls"
  [ -f "$dir/server.pem" ] && return 0
  mkdir -p "$dir"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -addext "basicConstraints=critical,CA:TRUE" \
    -keyout "$dir/server.key" -out "$dir/server.pem" >/dev/null 2>&1
  chmod 600 "$dir/server.key"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$dir/server.key" "$dir/server.pem"
}
pg_empty_dir() { rm -rf "$1"; mkdir -p "$1"; chmod 700 "$1"; [ "$(id -u)" -ne 0 ] || chown postgres: "$1"; }
# pg_node_conf PORT SYNC: what differs between the servers, in a file of its own (pg_basebackup
# copies the rest): the port, and whether commits wait for the standby (SYNC on or off; off on
# a primary without a standby, whose commits would wait forever).
pg_node_conf() {
  local file; file="$(pg_dir "$1")/herald-node.conf"
  printf "port = %s\nsynchronous_standby_names = '%s'\n" "$1" "$([ "$2" = on ] && echo herald_standby)" >"$file"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$file"
}
pg_launch() {
  pg_up "$1" && return 0
  log "starting PostgreSQL on 127.0.0.1:$1"
  ( close_inherited_fds; pgctl "$1" -l "$(pg_dir "$1")/server.log" -w -t 60 start )
}
# pg_halt PORT MODE: stop the server on PORT (fast or immediate) and wait for its postmaster.
pg_halt() {
  local pid
  pg_up "$1" || return 0
  log "stopping PostgreSQL on $1 ($2)"
  pid=$(head -n1 "$(pg_dir "$1")/postmaster.pid")
  pgctl "$1" -m "$2" -w stop
  wait_gone "$pid"
}
pg_init() {  # a new primary on PORT
  local data; data=$(pg_dir "$1")
  pg_empty_dir "$data"
  as_pg "$PG_BIN/initdb" -D "$data" -U herald --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 300
# As scripts/services.sh: a killed process loses nothing the kernel has; no machine crashes here.
fsync = off
shared_buffers = 128MB
log_min_messages = warning
wal_level = replica
max_wal_senders = 5
wal_keep_size = 256MB
synchronous_commit = on
ssl = on
ssl_cert_file = '$DIR/pg-tls/server.pem'
ssl_key_file = '$DIR/pg-tls/server.key'
include_if_exists = 'herald-node.conf'
CONF
  pg_node_conf "$1" off
  pg_launch "$1"
  sql "$1" "CREATE ROLE replicator REPLICATION LOGIN" >/dev/null
  as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$1" -U herald herald
}
pg_await_sync() {
  local primary="$1" start=$SECONDS
  until [ "$(sql "$primary" "SELECT state || ' ' || sync_state FROM pg_stat_replication WHERE application_name = 'herald_standby'")" = "streaming sync" ]; do
    [ $((SECONDS - start)) -lt $TIMEOUT ] || die "no synchronous standby streams from $primary"
    sleep 0.2
  done
}
pg_start() {
  [ -n "$PG_BIN" ] || die "PostgreSQL is not installed (scripts/services.sh install)"
  mkdir -p "$DIR"; [ "$(id -u)" -ne 0 ] || pg_can_reach "$DIR"; pg_tls
  local p data primary=""
  for p in "${PG_PORTS[@]}"; do  # the data directory of a primary, not of one fenced by pg-promote
    data=$(pg_dir "$p")
    [ -f "$data/PG_VERSION" ] && [ ! -e "$data/standby.signal" ] && [ ! -e "$data/herald-stale" ] && primary=$p
  done
  if [ -z "$primary" ]; then primary=${PG_PORTS[0]}; pg_init "$primary"; else pg_launch "$primary"; fi
  p=$(other_port "$primary")
  if [ -e "$(pg_dir "$p")/standby.signal" ]; then pg_launch "$p"; pg_await_sync "$primary"; else pg_rebuild_standby; fi
  pg_status
}
pg_stop() { local p; for p in "${PG_PORTS[@]}"; do pg_halt "$p" fast; done; }
pg_status() {
  local p
  for p in "${PG_PORTS[@]}"; do
    if ! pg_up "$p"; then echo "postgres 127.0.0.1:$p: down"
    elif [ "$(sql "$p" 'SELECT pg_is_in_recovery()')" = t ]; then echo "postgres 127.0.0.1:$p: standby"
    else
      echo "postgres 127.0.0.1:$p: primary"
      sql "$p" "SELECT '  replica ' || application_name || ': ' || state || ', ' || sync_state FROM pg_stat_replication"
    fi
  done
}
pg_kill_primary() {
  local p pid; p=$(pg_primary) || die "no primary is running"
  pid=$(head -n1 "$(pg_dir "$p")/postmaster.pid")
  log "kill -9 the primary's postmaster on $p (pid $pid)"
  kill -9 "$pid" && wait_gone "$pid"
}
pg_promote() {
  local p standby="" start
  for p in "${PG_PORTS[@]}"; do pg_up "$p" && [ -e "$(pg_dir "$p")/standby.signal" ] && standby=$p; done
  [ -n "$standby" ] || die "no standby is running"
  # One primary at a time: fence the old one, and keep pg-start from starting it as one.
  p=$(other_port "$standby")
  pg_halt "$p" immediate
  [ ! -f "$(pg_dir "$p")/PG_VERSION" ] || touch "$(pg_dir "$p")/herald-stale"
  pg_node_conf "$standby" off
  pgctl "$standby" reload
  start=$(date +%s%N)
  pgctl "$standby" -w -t 60 promote
  until [ "$(sql "$standby" 'SELECT pg_is_in_recovery()')" = f ]; do sleep 0.05; done
  log "promoted $standby in $((($(date +%s%N) - start) / 1000000)) ms; its commits wait for no standby until pg-rebuild-standby"
}
pg_rebuild_standby() {
  local primary standby
  primary=$(pg_primary) || die "no primary is running"
  standby=$(other_port "$primary")
  pg_halt "$standby" immediate
  log "making $standby a standby of $primary (pg_basebackup)"
  pg_empty_dir "$(pg_dir "$standby")"
  as_pg "$PG_BIN/pg_basebackup" -D "$(pg_dir "$standby")" -R -X stream -c fast \
    -d "host=127.0.0.1 port=$primary user=replicator application_name=herald_standby"
  pg_node_conf "$standby" off
  pg_launch "$standby"
  pg_node_conf "$primary" on
  pgctl "$primary" reload
  pg_await_sync "$primary"
}
# Both hosts by name: the name the servers' certificate carries, which Herald checks TLS against
# (an address as first host is refused with TLS on). DB: the database (default herald).
pg_urls() { echo "postgres://herald@localhost:${PG_PORTS[0]},localhost:${PG_PORTS[1]}/${1:-herald}"; }

cmd="${1:-status}"; shift || true
case "$cmd" in
  start) rabbit_start; pg_start ;;
  stop) heal; rabbit_stop; pg_stop ;;
  status) rabbit_status; pg_status ;;
  rabbit-start|rabbit-stop|rabbit-status|rabbit-urls|rabbit-kill|rabbit-start-node|rabbit-stop-node|rabbit-leader|\
  rabbit-rolling-restart|rabbit-unstick|partition|heal|pg-start|pg-stop|pg-status|pg-urls|pg-kill-primary|pg-promote|pg-rebuild-standby)
    "${cmd//-/_}" "$@" ;;
  *) grep '^#   scripts/cluster.sh' "$0" | cut -c2- >&2; exit 2 ;;
esac
