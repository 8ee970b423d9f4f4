#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Disaster-recovery region "west" for kco's tests, beside the test bed of
# scripts/local-connect.sh (region "east": its broker at 127.0.0.1:9092):
#   west   a second Kafka broker, KRaft combined mode: PLAINTEXT 127.0.0.1:9192 (for MM2
#          and Connect), SASL_PLAINTEXT with SCRAM-SHA-512 127.0.0.1:9194 (for kco),
#          controller 127.0.0.1:9195
#   w1     Connect cluster "w" on west (http://127.0.0.1:8090), running MirrorMaker 2 as
#          connectors: `mm2-east-source` (MirrorSourceConnector), `mm2-east-checkpoint`
#          (MirrorCheckpointConnector) and `mm2-east-heartbeat` (MirrorHeartbeatConnector:
#          west's `heartbeats`, copied to east as `west.heartbeats`), source alias `east` = the test bed's broker,
#          target alias `west`, default replication policy (`orders` -> `east.orders`),
#          every topic and every group including `connect-.*` except the groups matching
#          `kco-unmirrored-.*` (for tests of an excluded group); new topics and groups are
#          picked up within seconds and checkpoints emitted every second.
#   e1     Connect cluster "e" on east's broker (http://127.0.0.1:8091), running the mirror
#          the other way for failback: `mm2-west-source`, `mm2-west-checkpoint` and
#          `mm2-west-heartbeat` (east's `heartbeats`, copied to west as `east.heartbeats`:
#          the heartbeats west's readiness check counts), source alias `west`, target alias
#          `east` (west's `orders` -> `west.orders` on east; a topic that came from east is
#          not mirrored home), the test topics only (`kco-dr-.*`, `kco-rb-.*`), every group.
#
# Usage: scripts/dr-connect.sh <command>
#   up       start west, w1, e1 and the MM2 connectors (fresh data); harmless when already up
#   down     stop them and delete their data (logs are kept), with a line saying so
#   status   show each process, its pid, state and address (exit 0 only when all run);
#            `scripts/local-connect.sh status` lists the same rows when the region is up
#   stop-region east   region east is lost: stop e1, the test bed's Connect workers that run
#            (a1, a2, b1, s1) and its broker, keeping their data (`up` would wipe it);
#            MirrorMaker 2 east -> west (w1) waits for east's broker. Clusters s, g and l
#            (on east's broker too) are left running
#   start-region east  east comes back: its broker on its data, then the workers stop-region
#            stopped and e1; connectors resume in their target state (east's old sinks and
#            sources run again), and a MirrorMaker 2 task that failed while east was away is
#            restarted; waits until the workers serve and MirrorMaker 2 runs both ways
#
# Needs `scripts/local-connect.sh up` first (its broker, and the jars it resolved).
# Writes <state>/dr/: scram (user, then password, one per line), kco.yaml (a snippet for
# clusters east and w), the broker's and the worker's configs; data in <state>/dr/data.
#
# Environment:
#   KCO_DR_KAFKA_PORT (9192), KCO_DR_SASL_PORT (9194), KCO_DR_CONTROLLER_PORT (9195),
#   KCO_DR_CONNECT_PORT (8090), KCO_DR_BACK_PORT (8091)   ports
#   KCO_DR_OFFSET_LAG_MAX         MM2's offset.lag.max (default 100)
#   KCO_TESTBED_DIR, KCO_TESTBED_KAFKA_PORT, KCO_TESTBED_A1_PORT, KCO_TESTBED_A2_PORT,
#   KCO_TESTBED_WAIT_SECS, JAVA_HOME:
#                                 as for scripts/local-connect.sh (Kafka release: the one
#                                 the test bed runs)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
DR="$STATE/dr"
EAST_PORT=${KCO_TESTBED_KAFKA_PORT:-9092}
KAFKA_PORT=${KCO_DR_KAFKA_PORT:-9192}
SASL_PORT=${KCO_DR_SASL_PORT:-9194}
CONTROLLER_PORT=${KCO_DR_CONTROLLER_PORT:-9195}
CONNECT_PORT=${KCO_DR_CONNECT_PORT:-8090}
BACK_PORT=${KCO_DR_BACK_PORT:-8091}
OFFSET_LAG_MAX=${KCO_DR_OFFSET_LAG_MAX:-100}
USER_NAME=kco
PROCS=(west w1 e1)

worker_url() { echo "http://$HOST:$CONNECT_PORT"; }
back_url() { echo "http://$HOST:$BACK_PORT"; }

# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
# shellcheck source=lib/testbed-procs.sh
source "$ROOT/scripts/lib/testbed-procs.sh"
# shellcheck source=lib/testbed-conf.sh
source "$ROOT/scripts/lib/testbed-conf.sh"

KAFKA_VERSION=$(cat "$STATE/run/version" 2>/dev/null || true)

# Ready = REST answers, and both MirrorMaker 2 connector classes are listed.
dr_worker_ready() {
  local url=${1:-http://$HOST:$CONNECT_PORT} plugins
  curl -fsS -m 5 -o /dev/null "$url/connectors" 2>/dev/null || return 1
  plugins=$(curl -fsS -m 5 "$url/connector-plugins?connectorsOnly=true" 2>/dev/null) || return 1
  [[ $plugins == *MirrorSourceConnector* && $plugins == *MirrorCheckpointConnector* ]]
}

write_dr_configs() {
  mkdir -p "$DR/data/kafka"
  write_broker_properties "$DR/west.properties" "$KAFKA_PORT" "$CONTROLLER_PORT" "$DR/data/kafka" 3 \
    "$SASL_PORT"
  write_distributed_worker_properties "$DR/w1.properties" "$HOST:$KAFKA_PORT" \
    "http://$HOST:$CONNECT_PORT" w 1
  write_distributed_worker_properties "$DR/e1.properties" "$HOST:$EAST_PORT" \
    "$(back_url)" e 1
  cat >"$DR/kco.yaml" <<EOF
# Clusters of the DR test bed; the password is the second line of $DR/scram.
clusters:
  a:
    urls: [http://$HOST:${KCO_TESTBED_A1_PORT:-8083}, http://$HOST:${KCO_TESTBED_A2_PORT:-8084}]
    kafka: {bootstrap: "$HOST:$EAST_PORT"}
    mirrors:
      w: {alias: west, targetAlias: east, policy: default}
  w:
    urls: [http://$HOST:$CONNECT_PORT]
    kafka:
      bootstrap: "$HOST:$SASL_PORT"
      sasl: {mechanism: SCRAM-SHA-512, username: $USER_NAME, password: "\${env:KCO_DR_KAFKA_PASSWORD}"}
    mirrors:
      a: {alias: east, targetAlias: west, policy: default}
EOF
}

# Formats west's KRaft storage with the SCRAM credential of kco's user (KIP-900: Kafka
# 3.5 and newer take it at format time).
format_west_storage() {
  local password
  password=$(sed -n 2p "$DR/scram")
  format_storage west "$DR/west.properties" \
    --add-scram "SCRAM-SHA-512=[name=$USER_NAME,password=$password]"
}

# One MirrorMaker 2 connector, created or updated (PUT is idempotent), on the worker at
# URL (default w1).
put_connector() {
  local name=$1 body=$2 url=${3:-http://$HOST:$CONNECT_PORT} out
  out=$(curl -sS -m 30 -X PUT -H 'Content-Type: application/json' --data "$body" \
    -w '\n%{http_code}' "$url/connectors/$name/config") ||
    die "PUT /connectors/$name/config failed"
  [[ ${out##*$'\n'} == 20[01] ]] || die "PUT /connectors/$name/config: ${out%$'\n'*}"
}

# One MirrorMaker 2 flow SOURCE->TARGET as connectors on the worker at URL (whose Kafka is
# TARGET's, as MM2 runs them): `mm2-SOURCE-source` copies TOPICS (and every heartbeats
# topic), `mm2-SOURCE-checkpoint` checkpoints every group but the excluded, and
# `mm2-SOURCE-heartbeat` writes a heartbeat a second to TARGET's `heartbeats`: the flow the
# other way copies them as `TARGET.heartbeats`, how a readiness check on SOURCE's side
# knows that records come through.
mm2_flow() {
  local source=$1 target=$2 source_bootstrap=$3 target_bootstrap=$4 topics=$5 url=$6 common
  common=$(
    cat <<EOF
"tasks.max": "1",
"source.cluster.alias": "$source",
"target.cluster.alias": "$target",
"source.cluster.bootstrap.servers": "$source_bootstrap",
"target.cluster.bootstrap.servers": "$target_bootstrap",
"replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
"topics": "$topics",
"groups": ".*",
"groups.exclude": "__.*, console-consumer-.*, kco-unmirrored-.*",
"key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
"offset-syncs.topic.replication.factor": "1",
"offset.lag.max": "$OFFSET_LAG_MAX"
EOF
  )
  put_connector "mm2-$source-source" "{\"connector.class\": \"org.apache.kafka.connect.mirror.MirrorSourceConnector\",
    $common, \"refresh.topics.interval.seconds\": \"2\", \"replication.factor\": \"1\",
    \"sync.topic.acls.enabled\": \"false\", \"sync.topic.configs.enabled\": \"false\"}" "$url"
  put_connector "mm2-$source-checkpoint" "{\"connector.class\": \"org.apache.kafka.connect.mirror.MirrorCheckpointConnector\",
    $common, \"refresh.groups.interval.seconds\": \"2\", \"emit.checkpoints.interval.seconds\": \"1\",
    \"emit.checkpoints.enabled\": \"true\", \"checkpoints.topic.replication.factor\": \"1\",
    \"sync.group.offsets.enabled\": \"false\"}" "$url"
  put_connector "mm2-$source-heartbeat" "{\"connector.class\": \"org.apache.kafka.connect.mirror.MirrorHeartbeatConnector\",
    $common, \"emit.heartbeats.interval.seconds\": \"1\", \"heartbeats.topic.replication.factor\": \"1\"}" "$url"
}

# The mirror east -> west on w1: every topic.
mm2_connectors() {
  mm2_flow east west "$HOST:$EAST_PORT" "$HOST:$KAFKA_PORT" ".*" "$(worker_url)"
}

# The mirror for failback, west -> east, on e1: only the test topics (not w1's own).
mm2_back_connectors() {
  mm2_flow west east "$HOST:$KAFKA_PORT" "$HOST:$EAST_PORT" "kco-dr-.*, kco-rb-.*" "$(back_url)"
}

# The flow SOURCE's connectors on the worker at URL run: the checkpoint connector (it has
# tasks only while there are consumer groups to checkpoint), the heartbeat connector's
# task, and with `tasks` the source connector's task (it has one once a topic to copy
# exists), else that connector.
mm2_flow_running() {
  local source=$1 url=$2 tasks=${3:-} status
  status=$(curl -fsS -m 5 "$url/connectors/mm2-$source-source/status" 2>/dev/null) || return 1
  if [[ -n $tasks ]]; then
    [[ $status == *'"tasks":[{'*'"state":"RUNNING"'* ]] || return 1
  else
    [[ $status == *'"connector":{"state":"RUNNING"'* ]] || return 1
  fi
  status=$(curl -fsS -m 5 "$url/connectors/mm2-$source-checkpoint/status" 2>/dev/null) || return 1
  [[ $status == *'"connector":{"state":"RUNNING"'* && $status != *'"state":"FAILED"'* ]] || return 1
  status=$(curl -fsS -m 5 "$url/connectors/mm2-$source-heartbeat/status" 2>/dev/null) || return 1
  [[ $status == *'"tasks":[{'*'"state":"RUNNING"'* ]]
}

mm2_running() { mm2_flow_running east "$(worker_url)" tasks; }
mm2_back_running() { mm2_flow_running west "$(back_url)"; }

all_up() {
  live_pid west >/dev/null && live_pid w1 >/dev/null && dr_worker_ready && mm2_running &&
    live_pid e1 >/dev/null && dr_worker_ready "$(back_url)" && mm2_back_running
}

print_info() {
  echo "DR region west (Kafka $KAFKA_VERSION) is up:"
  echo "  kafka      $HOST:$KAFKA_PORT (PLAINTEXT), $HOST:$SASL_PORT (SASL_PLAINTEXT, SCRAM-SHA-512; $DR/scram)"
  echo "  connect w1 http://$HOST:$CONNECT_PORT  (cluster w: mm2-east-source, mm2-east-checkpoint, mm2-east-heartbeat)"
  echo "  connect e1 $(back_url)  (cluster e on east's broker: mm2-west-source, mm2-west-checkpoint, mm2-west-heartbeat)"
  echo "  kco.yaml   $DR/kco.yaml"
}

cmd_up() {
  lock
  local start=$SECONDS
  [[ -n $KAFKA_VERSION && -f $STATE/conf/classpath.args ]] ||
    die "run scripts/local-connect.sh up first (no $STATE/conf/classpath.args)"
  port_open "$EAST_PORT" || die "no broker at $HOST:$EAST_PORT: run scripts/local-connect.sh up first"
  check_java
  set_log_opts
  mkdir -p "$STATE/run" "$STATE/logs"
  if all_up; then
    say "already running"
    print_info
    return 0
  fi
  stop_procs e1 w1 west
  local port
  for port in "$KAFKA_PORT" "$SASL_PORT" "$CONTROLLER_PORT" "$CONNECT_PORT" "$BACK_PORT"; do
    if port_open "$port"; then
      die "port $HOST:$port is already in use by another process; stop it or set KCO_DR_*_PORT"
    fi
  done
  rm -rf "$DR"
  mkdir -p "$DR"
  chmod 700 "$DR"
  (
    umask 077
    printf '%s\n%s\n' "$USER_NAME" "$(head -c 18 /dev/urandom | base64 | tr -d '/+=')" >"$DR/scram"
  )
  write_dr_configs
  say "starting broker west (Kafka $KAFKA_VERSION) on $HOST:$KAFKA_PORT and $HOST:$SASL_PORT"
  format_west_storage
  start_proc west kafka.Kafka -Xms128m -Xmx384m -- "$DR/west.properties"
  local deadline=$((SECONDS + WAIT_SECS))
  until port_open "$KAFKA_PORT" && port_open "$SASL_PORT"; do
    live_pid west >/dev/null || fail_with_log west "broker west exited during startup"
    ((SECONDS < deadline)) || fail_with_log west "broker west did not listen within ${WAIT_SECS}s"
    sleep 0.2
  done
  say "starting Connect worker w1 on http://$HOST:$CONNECT_PORT"
  start_proc w1 org.apache.kafka.connect.cli.ConnectDistributed -Xms96m -Xmx384m -- "$DR/w1.properties"
  until dr_worker_ready; do
    live_pid w1 >/dev/null || fail_with_log w1 "worker w1 exited during startup"
    ((SECONDS < deadline)) || fail_with_log w1 "worker w1 did not serve within ${WAIT_SECS}s"
    sleep 0.5
  done
  say "starting Connect worker e1 on $(back_url) (east's broker, the mirror back)"
  start_proc e1 org.apache.kafka.connect.cli.ConnectDistributed -Xms96m -Xmx384m -- "$DR/e1.properties"
  say "creating the MirrorMaker 2 connectors"
  mm2_connectors
  until mm2_running; do
    ((SECONDS < deadline)) || fail_with_log w1 "the MirrorMaker 2 connectors did not run within ${WAIT_SECS}s"
    sleep 0.5
  done
  until dr_worker_ready "$(back_url)"; do
    live_pid e1 >/dev/null || fail_with_log e1 "worker e1 exited during startup"
    ((SECONDS < deadline)) || fail_with_log e1 "worker e1 did not serve within ${WAIT_SECS}s"
    sleep 0.5
  done
  mm2_back_connectors
  until mm2_back_running; do
    ((SECONDS < deadline)) || fail_with_log e1 "the MirrorMaker 2 connectors back did not run within ${WAIT_SECS}s"
    sleep 0.5
  done
  say "ready in $((SECONDS - start)) s"
  print_info
}

cmd_down() {
  [[ -d $STATE ]] || return 0
  lock
  local was_up=0
  if [[ -d $DR ]] || live_pid west >/dev/null || live_pid w1 >/dev/null || live_pid e1 >/dev/null; then
    was_up=1
  fi
  stop_procs e1 w1 west
  rm -rf "$DR"
  if ((was_up)); then
    say "DR region west stopped (broker west, workers w1 and e1); logs kept in $STATE/logs"
  fi
}

# The columns of `scripts/local-connect.sh status`: PROCESS PID STATE ADDRESS.
cmd_status() {
  local name pid state address rc=0
  printf '%-8s %-8s %-9s %s\n' PROCESS PID STATE ADDRESS
  for name in "${PROCS[@]}"; do
    case $name in
      west) address="$HOST:$KAFKA_PORT (SASL $HOST:$SASL_PORT)" ;;
      e1) address=$(back_url) ;;
      *) address=$(worker_url) ;;
    esac
    if pid=$(live_pid "$name"); then
      state=running
      case $name in
        west) ;;
        e1) dr_worker_ready "$(back_url)" || state=starting ;;
        *) dr_worker_ready || state=starting ;;
      esac
    else
      pid=-
      state=stopped
    fi
    [[ $state == running ]] || rc=1
    printf '%-8s %-8s %-9s %s\n' "$name" "$pid" "$state" "$address"
  done
  return "$rc"
}

# Only region east (the test bed's broker and its workers) is stopped and started again.
region_east() {
  [[ ${1:-} == east ]] || die "usage: $0 stop-region east | start-region east (only region east, the test bed's broker)"
}

# What stop-region stopped, for start-region: one worker name a line.
east_stopped() { echo "$STATE/run/east-stopped"; }

cmd_stop_region() {
  region_east "${1:-}"
  lock
  live_pid broker >/dev/null || die "east's broker is not running (scripts/local-connect.sh up)"
  local name
  local -a workers=()
  for name in a1 a2 b1 s1; do
    if live_pid "$name" >/dev/null; then workers+=("$name"); fi
  done
  printf '%s\n' "${workers[@]}" >"$(east_stopped)"
  # The workers first (each stops its tasks and commits), then the broker they write to.
  stop_procs e1 "${workers[@]}"
  stop_procs broker
  say "region east stopped (broker, workers ${workers[*]} e1); its data is kept in $STATE/data: 'start-region east' brings it back"
}

cmd_start_region() {
  region_east "${1:-}"
  lock
  [[ -f $STATE/conf/broker.properties && -d $STATE/data/kafka ]] ||
    die "no data of east's broker in $STATE (scripts/local-connect.sh up first)"
  [[ -f $DR/e1.properties ]] || die "the DR region is not set up (scripts/dr-connect.sh up first)"
  check_java
  set_log_opts
  local start=$SECONDS deadline=$((SECONDS + WAIT_SECS)) name
  if live_pid broker >/dev/null; then
    say "east's broker is already running"
  else
    say "starting east's broker on its data ($HOST:$EAST_PORT)"
    start_proc broker kafka.Kafka -Xms128m -Xmx512m -- "$STATE/conf/broker.properties"
  fi
  until port_open "$EAST_PORT"; do
    live_pid broker >/dev/null || fail_with_log broker "east's broker exited during startup"
    ((SECONDS < deadline)) || fail_with_log broker "east's broker did not listen within ${WAIT_SECS}s"
    sleep 0.2
  done
  local -a workers=()
  if [[ -f $(east_stopped) ]]; then mapfile -t workers <"$(east_stopped)"; fi
  for name in "${workers[@]}"; do
    [[ -n $name ]] || continue
    bash "$ROOT/scripts/local-connect.sh" start-worker "$name" || die "worker $name did not start"
  done
  if ! live_pid e1 >/dev/null; then
    say "starting Connect worker e1 on $(back_url)"
    start_proc e1 org.apache.kafka.connect.cli.ConnectDistributed -Xms96m -Xmx384m -- "$DR/e1.properties"
  fi
  until dr_worker_ready "$(back_url)"; do
    live_pid e1 >/dev/null || fail_with_log e1 "worker e1 exited during startup"
    ((SECONDS < deadline)) || fail_with_log e1 "worker e1 did not serve within ${WAIT_SECS}s"
    sleep 0.5
  done
  # A MirrorMaker 2 connector or task that failed while east's broker was away.
  local connector
  for connector in mm2-east-source mm2-east-checkpoint mm2-east-heartbeat; do
    curl -fsS -m 30 -o /dev/null -X POST \
      "$(worker_url)/connectors/$connector/restart?includeTasks=true&onlyFailed=true" || true
  done
  for connector in mm2-west-source mm2-west-checkpoint mm2-west-heartbeat; do
    curl -fsS -m 30 -o /dev/null -X POST \
      "$(back_url)/connectors/$connector/restart?includeTasks=true&onlyFailed=true" || true
  done
  until mm2_running && mm2_back_running; do
    ((SECONDS < deadline)) || fail_with_log w1 "MirrorMaker 2 did not run both ways within ${WAIT_SECS}s"
    sleep 0.5
  done
  rm -f "$(east_stopped)"
  say "region east is back in $((SECONDS - start)) s (broker, workers ${workers[*]} e1, on their data)"
}

lock() { take_lock "$STATE/.dr-lock"; }

case ${1:-} in
  stop-region) cmd_stop_region "${2:-}" ;;
  start-region) cmd_start_region "${2:-}" ;;
  *) service_main "$0" "${1:-}" ;;
esac
