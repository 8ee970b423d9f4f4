#!/usr/bin/env bash
# Local Kafka Connect test bed for kco, all on 127.0.0.1:
#   broker  one Kafka broker in KRaft combined mode (9092, controller 9093)
#   a1, a2  Connect cluster "a": two distributed workers in group kco-a (8083, 8084)
#   b1      Connect cluster "b": one distributed worker in group kco-b (8085)
#
# Usage: scripts/local-connect.sh <command>
#   up                   start everything (fresh Kafka data); harmless when already up
#   check                check the prerequisites (Java 17+, Maven 3.6.3+, curl)
#   down                 stop the processes started by `up` and delete their data
#   status               show each process, its pid and URL (exit 0 only when all run)
#   logs [NAME] [-f]     list the log files, or print (follow) the log of NAME
#   restart-worker NAME  stop and start one worker (a1, a2 or b1), wait until it serves
#   stop-worker NAME     stop one worker
#   start-worker NAME    start one stopped worker and wait until it serves
#
# Environment:
#   KAFKA_VERSION            Kafka release to run (default 4.3.1; 3.6 or newer)
#   KCO_TESTBED_DIR          state directory (default <repo>/.testbed)
#   KCO_TESTBED_KAFKA_PORT, KCO_TESTBED_CONTROLLER_PORT,
#   KCO_TESTBED_A1_PORT, KCO_TESTBED_A2_PORT, KCO_TESTBED_B_PORT
#                            ports (defaults 9092, 9093, 8083, 8084, 8085)
#   KCO_TESTBED_WAIT_SECS    how long `up` waits for the workers (default 180)
#   JAVA_HOME                Java to use (else `java` on PATH); Java 17 or newer
#   MAVEN_OPTS               passed to Maven, e.g. -Dmaven.repo.local=/some/dir
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
POM="$ROOT/testbed/pom.xml"

# 4.4.0 is newer (and runs on Java 17), but its connect-file and connect-mirror jars
# cannot be resolved from the Maven repository; 4.3.1 is the newest release with every
# artifact the test bed needs.
DEFAULT_KAFKA_VERSION=4.3.1
KAFKA_VERSION=${KAFKA_VERSION:-$DEFAULT_KAFKA_VERSION}
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
HOST=127.0.0.1
KAFKA_PORT=${KCO_TESTBED_KAFKA_PORT:-9092}
CONTROLLER_PORT=${KCO_TESTBED_CONTROLLER_PORT:-9093}
A1_PORT=${KCO_TESTBED_A1_PORT:-8083}
A2_PORT=${KCO_TESTBED_A2_PORT:-8084}
B_PORT=${KCO_TESTBED_B_PORT:-8085}
WAIT_SECS=${KCO_TESTBED_WAIT_SECS:-180}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

WORKERS=(a1 a2 b1)
PROCS=(broker a1 a2 b1)

# Small heaps, serial GC and C1 only: the test bed must fit on two cores.
JVM_COMMON=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError
  -XX:-UsePerfData -Djava.awt.headless=true -Dfile.encoding=UTF-8)
BROKER_HEAP=(-Xms128m -Xmx512m)
WORKER_HEAP=(-Xms96m -Xmx384m)

say() { printf 'local-connect: %s\n' "$*" >&2; }
die() {
  printf 'local-connect: error: %s\n' "$*" >&2
  exit 1
}

kafka_major() { echo "${KAFKA_VERSION%%.*}"; }

worker_port() {
  case $1 in
    a1) echo "$A1_PORT" ;;
    a2) echo "$A2_PORT" ;;
    b1) echo "$B_PORT" ;;
    *) die "unknown worker '$1' (expected a1, a2 or b1)" ;;
  esac
}

worker_cluster() {
  case $1 in
    a1 | a2) echo a ;;
    b1) echo b ;;
    *) die "unknown worker '$1' (expected a1, a2 or b1)" ;;
  esac
}

worker_url() { echo "http://$HOST:$(worker_port "$1")"; }
pid_file() { echo "$STATE/run/$1.pid"; }
log_file() { echo "$STATE/logs/$1.log"; }

# --- prerequisites ----------------------------------------------------------

check_java() {
  command -v "$JAVA" >/dev/null 2>&1 ||
    die "Java not found ('$JAVA'). Install Java 17 or newer (Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME."
  local spec
  spec=$("$JAVA" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = //p' | head -n 1)
  [[ -n $spec ]] || die "cannot tell the version of '$JAVA'"
  local major=${spec#1.}
  major=${major%%.*}
  ((major >= 17)) || die "Java $spec found at $(command -v "$JAVA"); Kafka $KAFKA_VERSION needs Java 17 or newer."
}

check_maven() {
  command -v mvn >/dev/null 2>&1 ||
    die "Maven not found. Install Maven 3.6.3 or newer (Debian: apt-get install maven); it fetches the Kafka jars."
  local v
  v=$(mvn -v 2>/dev/null | sed -n 's/.*Apache Maven \([0-9][0-9.]*\).*/\1/p' | head -n 1)
  [[ -n $v ]] || die "cannot tell the version of Maven ($(command -v mvn))"
  local major minor patch
  IFS=. read -r major minor patch <<<"$v"
  if ((major < 3 || (major == 3 && (minor < 6 || (minor == 6 && ${patch:-0} < 3))))); then
    die "Maven $v found; 3.6.3 or newer is needed."
  fi
}

check_tools() {
  command -v curl >/dev/null 2>&1 || die "curl not found (Debian: apt-get install curl)"
  check_java
  [[ $KAFKA_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KAFKA_VERSION '$KAFKA_VERSION' is not X.Y.Z"
  local major=${KAFKA_VERSION%%.*} minor
  minor=${KAFKA_VERSION#*.}
  minor=${minor%%.*}
  if ((major < 3 || (major == 3 && minor < 6))); then
    die "KAFKA_VERSION $KAFKA_VERSION is too old: the offsets API needs Kafka 3.6 or newer."
  fi
}

# --- classpath ----------------------------------------------------------------

# Prints the path of a file holding the runtime classpath for KAFKA_VERSION. The file is
# cached under $STATE/classpath and rebuilt with Maven when missing, older than the pom,
# or naming a jar that is gone.
classpath_file() {
  local cp="$STATE/classpath/$KAFKA_VERSION.txt"
  if [[ -s $cp && ! $POM -nt $cp ]] && classpath_complete "$cp"; then
    echo "$cp"
    return
  fi
  check_maven
  mkdir -p "$STATE/classpath"
  local out="$STATE/classpath/maven-$KAFKA_VERSION.log" tmp="$cp.tmp"
  local -a args=(-B -q -f "$POM" dependency:build-classpath
    "-Dkafka.version=$KAFKA_VERSION" "-Dmdep.outputFile=$tmp")
  if (($(kafka_major) < 4)); then
    args+=(-Dkafka.log4j1)
  fi
  say "resolving Kafka $KAFKA_VERSION jars with Maven (first run downloads them)..."
  # Kafka's test connectors are not published for every release: try with, then without.
  if mvn "${args[@]}" -Dkafka.test.plugins >"$out" 2>&1; then
    :
  elif grep -q 'connect-test-plugins' "$out" && mvn "${args[@]}" >"$out" 2>&1; then
    say "connect-test-plugins $KAFKA_VERSION is not published; continuing without it"
  else
    sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -m 1 'ERROR' >&2 || true
    die "Maven could not resolve Kafka $KAFKA_VERSION (full output: $out)"
  fi
  [[ -s $tmp ]] || die "Maven wrote no classpath (see $out)"
  mv "$tmp" "$cp"
  echo "$cp"
}

classpath_complete() {
  local jar
  while IFS= read -r -d: jar || [[ -n $jar ]]; do
    jar=${jar%$'\n'}
    [[ -z $jar || -f $jar ]] || return 1
  done <"$1"
}

# --- processes ----------------------------------------------------------------

# The pid of NAME when it is running and really is the process this script started.
live_pid() {
  local f
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  local pid
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-Dkco.testbed.process=$1 -Dkco.testbed.dir=$STATE " ||
    return 1
  echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# start_proc NAME MAIN_CLASS HEAP_OPTS... -- ARGS...
start_proc() {
  local name=$1 main=$2
  shift 2
  local -a heap=()
  while [[ $1 != -- ]]; do
    heap+=("$1")
    shift
  done
  shift
  local log pidf
  log=$(log_file "$name")
  pidf=$(pid_file "$name")
  rm -f "$pidf"
  printf '\n===== %s: starting %s (Kafka %s) =====\n' "$(date -u +%FT%TZ)" "$name" "$KAFKA_VERSION" >>"$log"
  # setsid: the test bed outlives this script and ignores the terminal's signals.
  # 9>&-: the child must not inherit the lock on the state directory.
  # shellcheck disable=SC2016  # $$ and $1 expand in the child shell
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidf" \
    "$JAVA" "${heap[@]}" "${JVM_COMMON[@]}" \
    "-Dkco.testbed.process=$name" "-Dkco.testbed.dir=$STATE" \
    "${LOG_OPTS[@]}" "@$STATE/conf/classpath.args" "$main" "$@" \
    >>"$log" 2>&1 </dev/null 9>&- &
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s $pidf ]] && return 0
    sleep 0.1
  done
  die "$name did not start (see $log)"
}

stop_procs() {
  local -a names=("$@") pids=() alive=()
  local name pid
  for name in "${names[@]}"; do
    if pid=$(live_pid "$name"); then
      say "stopping $name (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    alive=()
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
    done
    ((${#alive[@]} == 0)) && break
    sleep 0.2
  done
  for pid in "${alive[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid ignored TERM for 30 s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${alive[@]}"; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  done
  for name in "${names[@]}"; do rm -f "$(pid_file "$name")"; done
}

fail_with_log() {
  local name=$1 msg=$2 log
  log=$(log_file "$name")
  {
    printf 'local-connect: error: %s\n' "$msg"
    printf 'local-connect: last lines of %s:\n' "$log"
    tail -n 25 "$log" | sed 's/^/    /'
    printf 'local-connect: full log: %s\n' "$log"
  } >&2
  exit 1
}

wait_broker() {
  local deadline=$((SECONDS + WAIT_SECS))
  until port_open "$KAFKA_PORT"; do
    live_pid broker >/dev/null || fail_with_log broker "the broker exited during startup"
    ((SECONDS < deadline)) || fail_with_log broker "the broker did not listen on $HOST:$KAFKA_PORT within ${WAIT_SECS}s"
    sleep 0.2
  done
}

# Ready = REST answers GET /, the herder serves GET /connectors, and the FileStream
# plugins are listed.
worker_ready() {
  local url plugins
  url=$(worker_url "$1")
  curl -fsS -m 5 -o /dev/null "$url/" 2>/dev/null || return 1
  curl -fsS -m 5 -o /dev/null "$url/connectors" 2>/dev/null || return 1
  plugins=$(curl -fsS -m 5 "$url/connector-plugins" 2>/dev/null) || return 1
  [[ $plugins == *FileStreamSourceConnector* && $plugins == *FileStreamSinkConnector* ]]
}

wait_workers() {
  local deadline=$((SECONDS + WAIT_SECS)) name
  local -a pending=("$@") still=()
  while ((${#pending[@]} > 0)); do
    still=()
    for name in "${pending[@]}"; do
      if ! worker_ready "$name"; then
        live_pid "$name" >/dev/null || fail_with_log "$name" "worker $name exited during startup"
        still+=("$name")
      fi
    done
    pending=("${still[@]}")
    ((${#pending[@]} == 0)) && break
    ((SECONDS < deadline)) ||
      fail_with_log "${pending[0]}" "worker ${pending[0]} did not become ready at $(worker_url "${pending[0]}") within ${WAIT_SECS}s"
    sleep 0.5
  done
}

# --- configuration ------------------------------------------------------------

write_configs() {
  local cp=$1
  mkdir -p "$STATE/conf"
  printf -- '-cp "%s"\n' "$(tr -d '\n' <"$cp")" >"$STATE/conf/classpath.args"

  if (($(kafka_major) >= 4)); then
    cat >"$STATE/conf/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %X{connector.context}%m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.appinfo.name = org.apache.kafka.common.utils.AppInfoParser
logger.appinfo.level = WARN
EOF
    LOG_OPTS=("-Dlog4j2.configurationFile=$STATE/conf/log4j2.properties")
  else
    cat >"$STATE/conf/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %X{connector.context}%m (%c)%n
log4j.logger.org.apache.kafka.common.config.AbstractConfig=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
EOF
    LOG_OPTS=("-Dlog4j.configuration=file:$STATE/conf/log4j.properties")
  fi

  cat >"$STATE/conf/broker.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$STATE/data/kafka
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
EOF
  if (($(kafka_major) >= 4)); then
    cat >>"$STATE/conf/broker.properties" <<EOF
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
EOF
  fi

  local name cluster port
  for name in "${WORKERS[@]}"; do
    cluster=$(worker_cluster "$name")
    port=$(worker_port "$name")
    cat >"$STATE/conf/$name.properties" <<EOF
bootstrap.servers=$HOST:$KAFKA_PORT
group.id=kco-$cluster
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter.schemas.enable=false
config.storage.topic=kco-$cluster-configs
offset.storage.topic=kco-$cluster-offsets
status.storage.topic=kco-$cluster-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=5
status.storage.partitions=1
offset.flush.interval.ms=1000
listeners=HTTP://$HOST:$port
rest.advertised.host.name=$HOST
rest.advertised.port=$port
rest.advertised.listener=http
scheduled.rebalance.max.delay.ms=0
connector.client.config.override.policy=All
plugin.discovery=service_load
EOF
  done
}

format_storage() {
  local id=-
  # A random 16-byte cluster id in Kafka's URL-safe base64 form; one starting with "-"
  # would be taken for an option by the storage tool.
  while [[ $id == -* ]]; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  done
  local log
  log=$(log_file broker)
  printf '\n===== %s: formatting storage (cluster id %s) =====\n' "$(date -u +%FT%TZ)" "$id" >>"$log"
  "$JAVA" "${JVM_COMMON[@]}" "${LOG_OPTS[@]}" "@$STATE/conf/classpath.args" \
    kafka.tools.StorageTool format -t "$id" -c "$STATE/conf/broker.properties" >>"$log" 2>&1 ||
    fail_with_log broker "formatting the KRaft storage failed"
}

# --- commands -----------------------------------------------------------------

print_urls() {
  local name
  echo "Kafka $(<"$STATE/run/version") test bed is up:"
  echo "  kafka      $HOST:$KAFKA_PORT"
  for name in "${WORKERS[@]}"; do
    printf '  connect %s  %s  (cluster %s)\n' "$name" "$(worker_url "$name")" "$(worker_cluster "$name")"
  done
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
  for port in "$KAFKA_PORT" "$CONTROLLER_PORT" "$A1_PORT" "$A2_PORT" "$B_PORT"; do
    if port_open "$port"; then
      die "port $HOST:$port is already in use by another process; stop it or set KCO_TESTBED_*_PORT"
    fi
  done

  local cp
  cp=$(classpath_file)
  rm -rf "$STATE/data"
  mkdir -p "$STATE/data/kafka" "$STATE/run" "$STATE/logs"
  # Keep the previous run's logs next to the new ones.
  for name in "${PROCS[@]}"; do
    if [[ -f $(log_file "$name") ]]; then mv -f "$(log_file "$name")" "$(log_file "$name").1"; fi
  done
  write_configs "$cp"
  echo "$KAFKA_VERSION" >"$STATE/run/version"

  say "starting Kafka $KAFKA_VERSION broker on $HOST:$KAFKA_PORT"
  format_storage
  start_proc broker kafka.Kafka "${BROKER_HEAP[@]}" -- "$STATE/conf/broker.properties"
  wait_broker

  say "starting Connect workers ${WORKERS[*]}"
  for name in "${WORKERS[@]}"; do
    start_proc "$name" org.apache.kafka.connect.cli.ConnectDistributed "${WORKER_HEAP[@]}" -- \
      "$STATE/conf/$name.properties"
  done
  wait_workers "${WORKERS[@]}"
  say "ready in $((SECONDS - start)) s"
  print_urls
}

cmd_down_locked() {
  stop_procs "${WORKERS[@]}"
  stop_procs broker
  rm -rf "$STATE/data" "$STATE/run"
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
    for n in "${PROCS[@]}"; do echo "$n  $(log_file "$n")"; done
    return 0
  fi
  case $name in broker | a1 | a2 | b1) ;; *) die "unknown process '$name' (broker, a1, a2, b1)" ;; esac
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

worker_log_opts() {
  if (($(kafka_major) >= 4)); then
    LOG_OPTS=("-Dlog4j2.configurationFile=$STATE/conf/log4j2.properties")
  else
    LOG_OPTS=("-Dlog4j.configuration=file:$STATE/conf/log4j.properties")
  fi
}

cmd_stop_worker() {
  local name=${1:?usage: stop-worker a1|a2|b1}
  worker_port "$name" >/dev/null
  lock
  stop_procs "$name"
}

cmd_start_worker() {
  local name=${1:?usage: start-worker a1|a2|b1}
  worker_port "$name" >/dev/null
  check_java
  lock
  require_up
  KAFKA_VERSION=$(running_version)
  worker_log_opts
  if live_pid "$name" >/dev/null; then
    say "$name is already running"
  else
    say "starting $name"
    start_proc "$name" org.apache.kafka.connect.cli.ConnectDistributed "${WORKER_HEAP[@]}" -- \
      "$STATE/conf/$name.properties"
  fi
  wait_workers "$name"
  say "$name serves $(worker_url "$name")"
}

cmd_restart_worker() {
  local name=${1:?usage: restart-worker a1|a2|b1}
  worker_port "$name" >/dev/null
  check_java
  lock
  require_up
  KAFKA_VERSION=$(running_version)
  worker_log_opts
  stop_procs "$name"
  say "starting $name"
  start_proc "$name" org.apache.kafka.connect.cli.ConnectDistributed "${WORKER_HEAP[@]}" -- \
    "$STATE/conf/$name.properties"
  wait_workers "$name"
  say "$name serves $(worker_url "$name")"
}

# One command at a time per state directory.
lock() {
  mkdir -p "$STATE"
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$STATE/.lock"
    flock -w 600 9 || die "another local-connect.sh holds $STATE/.lock"
  fi
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
}

LOG_OPTS=()
main() {
  local cmd=${1:-}
  [[ $# -gt 0 ]] && shift
  case $cmd in
    up) cmd_up ;;
    check)
      check_tools
      check_maven
      say "prerequisites found (Java 17+, Maven, curl)"
      ;;
    down) cmd_down ;;
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
