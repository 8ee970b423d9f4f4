# Sourced by the test bed's scripts (local-connect.sh through testbed-procs.sh,
# secure-connect.sh, bearer-gateway.sh): the one way they start a long-lived service.
# shellcheck shell=bash

# spawn_daemon PIDFILE LOG COMMAND [ARGS...]
# Starts COMMAND in the background, apart from this script: in a session of its own (setsid:
# it outlives the script and ignores the terminal's signals), its pid written to PIDFILE, its
# output appended to LOG, stdin from /dev/null, and without descriptor 9, which holds the
# test bed's lock (local-connect.sh): a service that kept it would make every later
# `local-connect.sh up` wait for the lock until that service exits.
spawn_daemon() {
  local pidf=$1 log=$2
  shift 2
  rm -f "$pidf"
  # shellcheck disable=SC2016  # $$ and $1 expand in the child shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidf" "$@" >>"$log" 2>&1 </dev/null 9>&- &
}

# without_lock COMMAND [ARGS...]
# Runs COMMAND without descriptor 9 (the test bed's lock), for a service that puts itself in
# the background (nginx, pg_ctl).
without_lock() {
  "$@" 9>&-
}
