# Sourced by the test bed's scripts (local-connect.sh, dr-connect.sh, secure-connect.sh,
# bearer-gateway.sh, monitoring.sh, msk-connect.sh): their messages, the one way they start
# and stop a long-lived service, their lock, commands and usage.
# shellcheck shell=bash

# The script's name (without .sh) begins every line it writes to stderr.
PROG=$(basename "$0" .sh)
say() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
  printf '%s: error: %s\n' "$PROG" "$*" >&2
  exit 1
}

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

# stop_daemon PID SIGNAL [TENTHS]
# Stops a service started with spawn_daemon (or one that put itself in the background): sends
# it SIGNAL (TERM; QUIT for nginx), waits up to TENTHS tenths of a second (default 50) for it
# to exit, then kills it.
stop_daemon() {
  local pid=$1 signal=$2 tenths=${3:-50} _
  kill "-$signal" "$pid" 2>/dev/null || true
  for _ in $(seq "$tenths"); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

# take_lock FILE
# Holds the lock on FILE (waiting up to 600 s for it) on descriptor 9 until the script exits:
# one command at a time per state directory.
take_lock() {
  mkdir -p "$(dirname "$1")"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$1"
    flock -w 600 9 || die "another $(basename "$0") holds $1"
  fi
}

# without_lock COMMAND [ARGS...]
# Runs COMMAND without descriptor 9 (the test bed's lock), for a service that puts itself in
# the background (nginx, pg_ctl).
without_lock() {
  "$@" 9>&-
}

# script_usage SCRIPT
# The usage of one of the test bed's scripts: its header comment, from line 3 (after the
# shebang and the shellcheck directive) up to `set -euo pipefail`, without the `#`.
script_usage() {
  sed -n '3,/^set -euo/p' "$1" | sed '$d; s/^# \{0,1\}//'
}

# service_main SCRIPT COMMAND
# The commands of a service script: up, down and status run cmd_up, cmd_down and cmd_status;
# anything else prints the usage to stderr and exits 1.
service_main() {
  case ${2:-} in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    *)
      script_usage "$1" >&2
      exit 1
      ;;
  esac
}
