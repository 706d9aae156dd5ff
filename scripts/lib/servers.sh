# Shared by scripts/services.sh and scripts/cluster.sh (sourced, not run).

# A server started from a test process must not inherit that process's sockets (to the
# database, the broker): close every descriptor above stderr before exec'ing a server.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null || true
  done
}
