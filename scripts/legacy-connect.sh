#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Legacy Connect cluster "l" for kco's tests: one distributed worker of a Kafka Connect
# release without the offsets REST endpoints (KIP-875 came in 3.5 and 3.6; default 3.4.1,
# Confluent Platform 7.4's), at http://127.0.0.1:8087, on the broker of
# scripts/local-connect.sh (whatever its release: Kafka 4 brokers serve clients from 2.1 on).
# Its internal topics are kco-l-configs, kco-l-offsets (5 partitions) and kco-l-status, its
# group kco-l. kco reads and writes its offsets through Kafka.
#
# Usage: scripts/legacy-connect.sh <command>
#   up       resolve the release's jars with Maven (first run), start the worker, wait until
#            it serves; print a kco.yaml snippet for cluster l. Harmless when already up.
#   down     stop the worker and delete its state
#   status   show the worker, its pid and URL (exit 0 only when it runs)
#
# Needs `scripts/local-connect.sh up` first (its broker).
#
# Environment:
#   KCO_LEGACY_VERSION  the worker's Kafka release (default 3.4.1; older than 3.5)
#   KCO_LEGACY_PORT     the worker's port (default 8087)
#   KCO_TESTBED_DIR, KCO_TESTBED_KAFKA_PORT, JAVA_HOME, MAVEN_OPTS: as for
#                       scripts/local-connect.sh
#   KCO_TESTBED_WAIT_SECS  how long `up` waits for the worker (default 180)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
POM="$ROOT/testbed/pom.xml"
# The worker's release: classpath_file and set_log_opts (testbed-procs.sh) read it.
KAFKA_VERSION=${KCO_LEGACY_VERSION:-3.4.1}
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
LEG="$STATE/legacy"
PORT=${KCO_LEGACY_PORT:-8087}
KAFKA_PORT=${KCO_TESTBED_KAFKA_PORT:-9092}
NAME=l1

# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
# shellcheck source=lib/testbed-procs.sh
source "$ROOT/scripts/lib/testbed-procs.sh"
# shellcheck source=lib/testbed-conf.sh
source "$ROOT/scripts/lib/testbed-conf.sh"

write_config() {
  mkdir -p "$LEG"
  write_log4j1_config "$LEG/log4j.properties"
  write_distributed_worker_properties "$LEG/$NAME.properties" "$HOST:$KAFKA_PORT" \
    "http://$HOST:$PORT" l 5
  cat >"$LEG/kco.yaml" <<EOF
clusters:
  l:
    urls: [http://$HOST:$PORT]
    kafka: {bootstrap: "$HOST:$KAFKA_PORT"}
    connectTopics: {offsets: kco-l-offsets}
EOF
}

# Ready: GET /connectors answers.
ready() {
  curl -fsS -m 5 -o /dev/null "http://$HOST:$PORT/connectors" 2>/dev/null
}

cmd_up() {
  if live_pid "$NAME" >/dev/null && ready; then
    say "cluster l (Kafka Connect $KAFKA_VERSION) already runs at http://$HOST:$PORT"
    print_snippet
    return 0
  fi
  version_before "$KAFKA_VERSION" 3.5.0 ||
    die "KCO_LEGACY_VERSION=$KAFKA_VERSION serves the offsets endpoints; cluster l is for a release before 3.5"
  port_open "$KAFKA_PORT" ||
    die "no broker at $HOST:$KAFKA_PORT: run scripts/local-connect.sh up first"
  port_open "$PORT" && die "port $HOST:$PORT is already in use by another process; set KCO_LEGACY_PORT"
  check_java
  local cp
  cp=$(classpath_file)
  write_config
  mkdir -p "$STATE/run" "$STATE/logs"
  local log pidf
  log=$(log_file "$NAME")
  pidf=$(pid_file "$NAME")
  printf '\n===== %s: starting %s (Kafka Connect %s) =====\n' "$(date -u +%FT%TZ)" "$NAME" \
    "$KAFKA_VERSION" >>"$log"
  spawn_daemon "$pidf" "$log" \
    "$JAVA" -Xms96m -Xmx384m "${JVM_COMMON[@]}" "-Dkco.testbed.process=$NAME" \
    "-Dkco.testbed.dir=$STATE" "-Dlog4j.configuration=file:$LEG/log4j.properties" \
    -cp "$(tr -d '\n' <"$cp")" org.apache.kafka.connect.cli.ConnectDistributed \
    "$LEG/$NAME.properties"
  local deadline=$((SECONDS + WAIT_SECS))
  until ready; do
    if ! live_pid "$NAME" >/dev/null && [[ -s $pidf ]]; then
      tail -n 25 "$log" >&2
      die "the legacy worker exited during startup (log: $log)"
    fi
    ((SECONDS < deadline)) || die "the legacy worker did not serve http://$HOST:$PORT within ${WAIT_SECS}s (log: $log)"
    sleep 0.5
  done
  say "cluster l serves http://$HOST:$PORT (Kafka Connect $KAFKA_VERSION: no offsets endpoints)"
  print_snippet
}

print_snippet() {
  say "kco.yaml for cluster l ($LEG/kco.yaml):"
  cat "$LEG/kco.yaml"
}

cmd_down() {
  stop_procs "$NAME"
  rm -rf "$LEG"
}

cmd_status() {
  local pid
  if pid=$(live_pid "$NAME"); then
    printf '  %-8s pid %-7s http://%s:%s  (cluster l, Kafka Connect %s)\n' "$NAME" "$pid" \
      "$HOST" "$PORT" "$KAFKA_VERSION"
    return 0
  fi
  printf '  %-8s stopped\n' "$NAME"
  return 1
}

service_main "$0" "${1:-}"
