#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Local Kafka Connect test bed for kco, all on 127.0.0.1:
#   broker  one Kafka broker in KRaft combined mode (9092, controller 9093), with a
#           listener IAM (9096, SASL_PLAINTEXT/OAUTHBEARER) standing in for Amazon MSK's IAM
#           listener: MSK's token checked by testbed/iam (scripts/lib/testbed-iam.sh), test
#           credentials in <state>/iam
#   a1, a2  Connect cluster "a": two distributed workers in group kco-a (8083, 8084)
#   b1      Connect cluster "b": one distributed worker in group kco-b (8085)
#   s1      a standalone worker, source offsets in a file (8086)
#   pg      PostgreSQL with wal_level=logical (5433), for the Debezium connector that
#           the workers load from a plugin directory Maven fills (testbed/debezium)
#
# Usage: scripts/local-connect.sh <command>
#   up                   start everything (fresh Kafka data); harmless when already up
#   up --secure          also Connect cluster "s" over HTTPS with client certificates and
#                        basic auth (scripts/secure-connect.sh), and cluster "g", cluster b
#                        behind a bearer-token HTTPS gateway (scripts/bearer-gateway.sh);
#                        `down` stops both too
#   up --dr              also the DR region "west" (scripts/dr-connect.sh): a second broker
#                        (9192, SASL/SCRAM 9194), Connect cluster "w" (8090) running
#                        MirrorMaker 2 from this broker; `down` stops it too
#                        (--secure and --dr may be given together)
#   check                check the prerequisites (Java 17+, Maven 3.6.3+, curl)
#   down                 stop the processes started by `up` and delete their data
#   status               show each process, its pid and URL (exit 0 only when all run),
#                        the DR region's too when it was started (`up --dr`)
#   logs [NAME] [-f]     list the log files, or print (follow) the log of NAME
#   restart-worker NAME  stop and start one worker (a1, a2, b1 or s1), wait until it serves
#   stop-worker NAME     stop one worker
#   start-worker NAME    start one stopped worker and wait until it serves
#
# Environment:
#   KAFKA_VERSION            Kafka release to run (default 4.3.1; 3.6 or newer)
#   KCO_TESTBED_DIR          state directory (default <repo>/.testbed)
#   KCO_TESTBED_KAFKA_PORT, KCO_TESTBED_CONTROLLER_PORT,
#   KCO_TESTBED_A1_PORT, KCO_TESTBED_A2_PORT, KCO_TESTBED_B_PORT,
#   KCO_TESTBED_S_PORT, KCO_TESTBED_PG_PORT, KCO_IAM_PORT
#                            ports (defaults 9092, 9093, 8083, 8084, 8085, 8086, 5433, 9096)
#   KCO_TESTBED_POSTGRES=0   no PostgreSQL and no Debezium plugin
#   KCO_TESTBED_STANDALONE=0 no standalone worker
#   KCO_TESTBED_WAIT_SECS    how long `up` waits for the workers (default 180)
#   JAVA_HOME                Java to use (else `java` on PATH); Java 17 or newer
#   MAVEN_OPTS               passed to Maven, e.g. -Dmaven.repo.local=/some/dir
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
POM="$ROOT/testbed/pom.xml"

# 4.4.0 is newer (and runs on Java 17), but its connect-file and connect-mirror jars are not
# in the Maven repository: its worker runs with the newest plugin jars that resolve (4.3.1;
# scripts/lib/testbed-procs.sh). 4.3.1 is the newest release with every artifact of its own.
DEFAULT_KAFKA_VERSION=4.3.1
KAFKA_VERSION=${KAFKA_VERSION:-$DEFAULT_KAFKA_VERSION}
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
KAFKA_PORT=${KCO_TESTBED_KAFKA_PORT:-9092}
CONTROLLER_PORT=${KCO_TESTBED_CONTROLLER_PORT:-9093}
A1_PORT=${KCO_TESTBED_A1_PORT:-8083}
A2_PORT=${KCO_TESTBED_A2_PORT:-8084}
B_PORT=${KCO_TESTBED_B_PORT:-8085}
S_PORT=${KCO_TESTBED_S_PORT:-8086}
PG_PORT=${KCO_TESTBED_PG_PORT:-5433}
IAM_PORT=${KCO_IAM_PORT:-9096}
WITH_PG=${KCO_TESTBED_POSTGRES:-1}
WITH_STANDALONE=${KCO_TESTBED_STANDALONE:-1}

# Distributed workers, then every process `up` starts (the standalone one last).
WORKERS=(a1 a2 b1)
PROCS=(broker a1 a2 b1)
ALL_WORKERS=(a1 a2 b1)
if [[ $WITH_STANDALONE == 1 ]]; then
  PROCS+=(s1)
  ALL_WORKERS+=(s1)
fi

# Small heaps (testbed-procs.sh has the other JVM options).
BROKER_HEAP=(-Xms128m -Xmx512m)
WORKER_HEAP=(-Xms96m -Xmx384m)

worker_port() {
  case $1 in
    a1) echo "$A1_PORT" ;;
    a2) echo "$A2_PORT" ;;
    b1) echo "$B_PORT" ;;
    s1) echo "$S_PORT" ;;
    *) die "unknown worker '$1' (expected a1, a2, b1 or s1)" ;;
  esac
}

worker_cluster() {
  case $1 in
    a1 | a2) echo a ;;
    b1) echo b ;;
    s1) echo standalone ;;
    *) die "unknown worker '$1' (expected a1, a2, b1 or s1)" ;;
  esac
}

worker_url() { echo "http://$HOST:$(worker_port "$1")"; }
worker_main() {
  if [[ $1 == s1 ]]; then
    echo org.apache.kafka.connect.cli.ConnectStandalone
  else
    echo org.apache.kafka.connect.cli.ConnectDistributed
  fi
}
start_worker() {
  start_proc "$1" "$(worker_main "$1")" "${WORKER_HEAP[@]}" -- "$STATE/conf/$1.properties"
}

# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
# shellcheck source=lib/testbed-procs.sh
source "$ROOT/scripts/lib/testbed-procs.sh"
# shellcheck source=lib/testbed-conf.sh
source "$ROOT/scripts/lib/testbed-conf.sh"
# shellcheck source=lib/testbed-pg.sh
source "$ROOT/scripts/lib/testbed-pg.sh"
# shellcheck source=lib/testbed-iam.sh
source "$ROOT/scripts/lib/testbed-iam.sh"

# --- commands -----------------------------------------------------------------

print_urls() {
  local name
  local version plugins
  version=$(<"$STATE/run/version")
  echo "Kafka $version test bed is up:"
  echo "  kafka      $HOST:$KAFKA_PORT"
  echo "  kafka IAM  $HOST:$IAM_PORT  (MSK IAM stand-in, region $IAM_REGION; credentials in $STATE/iam)"
  plugins=$STATE/classpath/$version.plugins
  if [[ -f $plugins ]]; then
    echo "  plugins    connect-file and connect-mirror $(<"$plugins") ($version's are not published)"
  fi
  for name in "${ALL_WORKERS[@]}"; do
    printf '  connect %s  %s  (cluster %s)\n' "$name" "$(worker_url "$name")" "$(worker_cluster "$name")"
  done
  if [[ $WITH_STANDALONE == 1 ]]; then
    echo "  s1 offsets $STATE/data/s1.offsets"
  fi
  if [[ $WITH_PG == 1 ]]; then
    echo "  postgres   $HOST:$PG_PORT  (user, password and database: kco)"
  fi
  echo "  logs       $STATE/logs"
}

running_version() { cat "$STATE/run/version" 2>/dev/null || true; }

cmd_up() {
  local start=$SECONDS name
  check_tools
  mkdir -p "$STATE/run" "$STATE/logs"
  lock

  local -a up=() down=()
  for name in "${PROCS[@]}"; do
    if live_pid "$name" >/dev/null; then up+=("$name"); else down+=("$name"); fi
  done
  if ((${#up[@]} > 0)); then
    local running
    running=$(running_version)
    if [[ -n $running && $running != "$KAFKA_VERSION" ]]; then
      die "the test bed runs Kafka $running; run '$0 down' before switching to $KAFKA_VERSION"
    fi
    if ((${#down[@]} == 0)); then
      say "already running"
      print_urls
      return 0
    fi
    say "partial test bed (${down[*]} not running); restarting it"
    cmd_down_locked
  fi

  local port
  local -a ports=("$KAFKA_PORT" "$CONTROLLER_PORT" "$IAM_PORT" "$A1_PORT" "$A2_PORT" "$B_PORT")
  [[ $WITH_STANDALONE == 1 ]] && ports+=("$S_PORT")
  [[ $WITH_PG == 1 ]] && ports+=("$PG_PORT")
  for port in "${ports[@]}"; do
    if port_open "$port"; then
      die "port $HOST:$port is already in use by another process; stop it or set KCO_TESTBED_*_PORT"
    fi
  done

  local cp
  cp=$(classpath_file)
  if [[ $WITH_PG == 1 ]]; then
    debezium_plugin
  fi
  pg_stop
  rm -rf "$STATE/data"
  mkdir -p "$STATE/data/kafka" "$STATE/run" "$STATE/logs"
  # Keep the previous run's logs next to the new ones.
  for name in "${PROCS[@]}"; do
    if [[ -f $(log_file "$name") ]]; then mv -f "$(log_file "$name")" "$(log_file "$name").1"; fi
  done
  write_configs "$cp"
  echo "$KAFKA_VERSION" >"$STATE/run/version"

  say "starting Kafka $KAFKA_VERSION broker on $HOST:$KAFKA_PORT"
  format_storage broker "$STATE/conf/broker.properties"
  start_proc broker kafka.Kafka "${BROKER_HEAP[@]}" -- "$STATE/conf/broker.properties"
  wait_broker

  if [[ $WITH_PG == 1 ]]; then
    pg_start
  fi

  say "starting Connect workers ${ALL_WORKERS[*]}"
  for name in "${ALL_WORKERS[@]}"; do
    start_worker "$name"
  done
  wait_workers "${ALL_WORKERS[@]}"
  say "ready in $((SECONDS - start)) s"
  print_urls
}

cmd_down_locked() {
  # Whatever `up` may have started, also with other KCO_TESTBED_STANDALONE/POSTGRES; and the
  # legacy worker (scripts/legacy-connect.sh), which runs on this broker and keeps its pid
  # in the same run directory: removed with it, it would be left running, unseen.
  stop_procs a1 a2 b1 s1 l1
  stop_procs broker
  pg_stop
  rm -rf "$STATE/data" "$STATE/run" "$STATE/legacy" "$STATE/iam"
}

cmd_down() {
  [[ -d $STATE ]] || {
    say "nothing to stop ($STATE does not exist)"
    return 0
  }
  lock
  cmd_down_locked
  say "stopped; logs kept in $STATE/logs"
}

cmd_status() {
  local name pid url state any=0 all_up=1
  local version
  version=$(running_version)
  printf '%-8s %-8s %-9s %s\n' PROCESS PID STATE ADDRESS
  for name in "${PROCS[@]}"; do
    if pid=$(live_pid "$name"); then
      any=1
      state=running
    else
      pid=-
      state=stopped
    fi
    if [[ $name == broker ]]; then
      url="$HOST:$KAFKA_PORT"
    else
      url=$(worker_url "$name")
      if [[ $state == running ]]; then
        worker_ready "$name" || state=starting
      fi
    fi
    [[ $state == running ]] || all_up=0
    printf '%-8s %-8s %-9s %s\n' "$name" "$pid" "$state" "$url"
  done
  # The DR region (scripts/dr-connect.sh), when it was started: its rows, without the header.
  if [[ -d $STATE/dr ]] || live_pid west >/dev/null || live_pid w1 >/dev/null; then
    local dr_rows
    dr_rows=$(bash "$(dirname "${BASH_SOURCE[0]}")/dr-connect.sh" status) || all_up=0
    any=1
    tail -n +2 <<<"$dr_rows"
  fi
  if [[ $WITH_PG == 1 ]]; then
    if pid=$(pg_pid); then
      any=1
      state=running
    else
      pid=-
      state=stopped
      all_up=0
    fi
    printf '%-8s %-8s %-9s %s\n' pg "$pid" "$state" "$HOST:$PG_PORT"
  fi
  if ((any)); then
    echo "Kafka ${version:-?}; state in $STATE"
  else
    echo "test bed is down"
  fi
  ((all_up))
}

cmd_logs() {
  local name=${1:-}
  if [[ -z $name ]]; then
    local n
    for n in "${PROCS[@]}" pg; do echo "$n  $(log_file "$n")"; done
    return 0
  fi
  case $name in broker | a1 | a2 | b1 | s1 | pg) ;; *) die "unknown process '$name' (broker, a1, a2, b1, s1, pg)" ;; esac
  local log
  log=$(log_file "$name")
  [[ -f $log ]] || die "no log yet: $log"
  if [[ ${2:-} == -f ]]; then
    exec tail -n 50 -F "$log"
  fi
  tail -n 200 "$log"
}

require_up() {
  live_pid broker >/dev/null || die "the test bed is not running; run '$0 up' first"
  [[ -f $STATE/conf/classpath.args ]] || die "missing $STATE/conf; run '$0 down' and '$0 up'"
}

# Before worker NAME is started on the running test bed: a known name, Java, the lock, and
# the running Kafka release's logging options.
prepare_worker_start() {
  worker_port "$1" >/dev/null
  check_java
  lock
  require_up
  KAFKA_VERSION=$(running_version)
  set_log_opts
}

# Starts worker NAME unless it runs, and waits until it serves.
start_worker_and_wait() {
  if live_pid "$1" >/dev/null; then
    say "$1 is already running"
  else
    say "starting $1"
    start_worker "$1"
  fi
  wait_workers "$1"
  say "$1 serves $(worker_url "$1")"
}

cmd_stop_worker() {
  local name=${1:?usage: stop-worker a1|a2|b1|s1}
  worker_port "$name" >/dev/null
  lock
  stop_procs "$name"
}

cmd_start_worker() {
  local name=${1:?usage: start-worker a1|a2|b1|s1}
  prepare_worker_start "$name"
  start_worker_and_wait "$name"
}

cmd_restart_worker() {
  local name=${1:?usage: restart-worker a1|a2|b1|s1}
  prepare_worker_start "$name"
  stop_procs "$name"
  start_worker_and_wait "$name"
}

# One command at a time per state directory.
lock() { take_lock "$STATE/.lock"; }

usage() { script_usage "${BASH_SOURCE[0]}"; }

main() {
  local cmd=${1:-}
  [[ $# -gt 0 ]] && shift
  case $cmd in
    up)
      local opt secure=0 dr=0
      for opt in "$@"; do
        case $opt in
          --secure) secure=1 ;;
          --dr) dr=1 ;;
          *)
            usage >&2
            exit 2
            ;;
        esac
      done
      cmd_up
      if ((secure)); then
        bash "$(dirname "${BASH_SOURCE[0]}")/secure-connect.sh" up
        bash "$(dirname "${BASH_SOURCE[0]}")/bearer-gateway.sh" up
      fi
      if ((dr)); then
        bash "$(dirname "${BASH_SOURCE[0]}")/dr-connect.sh" up
      fi
      ;;
    check)
      check_tools
      check_maven
      say "prerequisites found (Java 17+, Maven, curl)"
      ;;
    down)
      # Cluster s runs on this test bed's broker and the gateway in front of its worker b1:
      # they go first.
      bash "$(dirname "${BASH_SOURCE[0]}")/bearer-gateway.sh" down >/dev/null 2>&1 || true
      bash "$(dirname "${BASH_SOURCE[0]}")/secure-connect.sh" down >/dev/null 2>&1 || true
      # The MSK Connect stand-in runs its connectors on worker a1.
      bash "$(dirname "${BASH_SOURCE[0]}")/msk-connect.sh" down >/dev/null 2>&1 || true
      # MirrorMaker 2 in cluster w reads this broker: the DR region goes first too, and says so.
      bash "$(dirname "${BASH_SOURCE[0]}")/dr-connect.sh" down || true
      cmd_down
      ;;
    status) cmd_status ;;
    logs) cmd_logs "$@" ;;
    restart-worker) cmd_restart_worker "$@" ;;
    stop-worker) cmd_stop_worker "$@" ;;
    start-worker) cmd_start_worker "$@" ;;
    -h | --help | help) usage ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
