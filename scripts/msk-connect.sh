#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Amazon MSK Connect stand-in "msk" for kco's tests: kco-msk-standin (src/fake/msk_connect)
# serving MSK Connect's control plane (ListConnectors, DescribeConnector, CreateConnector,
# DeleteConnector, the worker configurations) on http://127.0.0.1:8095, checking every
# request's SigV4 signature against test credentials, and running each connector it is asked
# to create on cluster a's worker (http://127.0.0.1:8083), whose REST API it never shows.
#
# Usage: scripts/msk-connect.sh <command>
#   up       build kco-msk-standin (cargo, `fake` feature) if needed, make test credentials,
#            start it with a worker configuration pinning cluster a's offsets topic, wait
#            until it answers. Harmless when already up.
#   down     stop it and delete its files
#   status   show its pid and URL (exit 0 only when it runs)
#
# Needs `scripts/local-connect.sh up` first (cluster a's worker).
#
# Writes <state>/msk-connect/: credentials (an AWS shared credentials file, profile kco-msk,
# mode 600), worker-configuration.properties and kco-a-pinned.arn (the ARN of the worker
# configuration that pins offset.storage.topic), env (AWS_SHARED_CREDENTIALS_FILE,
# AWS_PROFILE, AWS_REGION, KCO_MSK_CONNECT_URL, KCO_MSK_WORKER_CONFIGURATION_ARN: source it),
# kco.yaml (a snippet), standin.log.
#
# Environment:
#   KCO_MSK_CONNECT_PORT           the stand-in's port (default 8095)
#   KCO_MSK_CONNECT_WORKER         the worker behind it (default cluster a: http://127.0.0.1:8083, or KCO_TESTBED_A1_PORT)
#   KCO_MSK_CONNECT_OFFSETS_TOPIC  that worker's offsets topic (default kco-a-offsets)
#   KCO_MSK_CONNECT_REGION         the region signatures are scoped to (default us-east-1)
#   KCO_MSK_CONNECT_KAFKA          the Kafka of its connectors, for kco.yaml (default the test
#                                  bed's broker: 127.0.0.1:9092, or KCO_TESTBED_KAFKA_PORT)
#   KCO_MSK_STANDIN_BIN            a kco-msk-standin binary to run instead of building one
#   KCO_TESTBED_DIR                as for scripts/local-connect.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
DIR="$STATE/msk-connect"
HOST=127.0.0.1
PORT=${KCO_MSK_CONNECT_PORT:-8095}
WORKER=${KCO_MSK_CONNECT_WORKER:-http://127.0.0.1:${KCO_TESTBED_A1_PORT:-8083}}
TOPIC=${KCO_MSK_CONNECT_OFFSETS_TOPIC:-kco-a-offsets}
REGION=${KCO_MSK_CONNECT_REGION:-us-east-1}
KAFKA=${KCO_MSK_CONNECT_KAFKA:-127.0.0.1:${KCO_TESTBED_KAFKA_PORT:-9092}}
URL="http://$HOST:$PORT"

live_pid() {
  local pid
  [[ -f $DIR/standin.pid ]] || return 1
  pid=$(<"$DIR/standin.pid")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$DIR/credentials" || return 1
  echo "$pid"
}

# Up when it answers an unsigned request as MSK Connect does: 403.
ready() {
  [[ $(curl -s -m 5 -o /dev/null -w '%{http_code}' "$URL/v1/connectors" 2>/dev/null) == 403 ]]
}

standin_bin() {
  if [[ -n ${KCO_MSK_STANDIN_BIN:-} ]]; then
    [[ -x $KCO_MSK_STANDIN_BIN ]] || die "KCO_MSK_STANDIN_BIN=$KCO_MSK_STANDIN_BIN is not executable"
    echo "$KCO_MSK_STANDIN_BIN"
    return 0
  fi
  say "building kco-msk-standin (cargo build --features fake --bin kco-msk-standin)"
  (cd "$ROOT" && cargo build -q --features fake --bin kco-msk-standin >&2) ||
    die "cargo could not build kco-msk-standin"
  echo "${CARGO_TARGET_DIR:-$ROOT/target}/debug/kco-msk-standin"
}

random() { head -c 64 /dev/urandom | base64 | tr -dc "$1" | head -c "$2"; }

# Test credentials: an access key id and secret of AWS's shapes, made up here.
make_files() {
  mkdir -p "$DIR"
  chmod 700 "$DIR"
  if [[ ! -s $DIR/credentials ]]; then
    (
      umask 077
      printf '[kco-msk]\naws_access_key_id = AKIA%s\naws_secret_access_key = %s\n' \
        "$(random 'A-Z2-7' 16)" "$(random 'A-Za-z0-9/+' 40)" >"$DIR/credentials"
    )
  fi
  cat >"$DIR/worker-configuration.properties" <<PROPS
# The worker configuration of kco's MSK Connect stand-in: a connector created with it keeps
# its offsets in cluster a's offsets topic, as MSK Connect's custom offset storage topic.
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
offset.storage.topic=$TOPIC
PROPS
}

write_snippets() {
  local arn
  arn=$(<"$DIR/kco-a-pinned.arn")
  cat >"$DIR/env" <<ENV
export AWS_SHARED_CREDENTIALS_FILE=$DIR/credentials AWS_PROFILE=kco-msk AWS_REGION=$REGION
export KCO_MSK_CONNECT_URL=$URL KCO_MSK_WORKER_CONFIGURATION_ARN=$arn
ENV
  cat >"$DIR/kco.yaml" <<YAML
# MSK Connect stand-in (scripts/msk-connect.sh): cluster m, its endpoint and region;
# credentials from AWS_SHARED_CREDENTIALS_FILE=$DIR/credentials, AWS_PROFILE=kco-msk.
# Worker configuration pinning offset.storage.topic=$TOPIC: $arn
clusters:
  m:
    mskConnect: {region: $REGION, endpoint: "$URL"}
    kafka: {bootstrap: "$KAFKA"}
    connectTopics: {offsets: $TOPIC}
YAML
}

cmd_up() {
  if live_pid >/dev/null && ready; then
    say "already up: $URL"
    return 0
  fi
  curl -fsS -m 5 -o /dev/null "$WORKER/" 2>/dev/null ||
    die "no worker answers at $WORKER: run scripts/local-connect.sh up first"
  local bin
  bin=$(standin_bin)
  make_files
  rm -f "$DIR/kco-a-pinned.arn"
  spawn_daemon "$DIR/standin.pid" "$DIR/standin.log" "$bin" \
    --bind "$HOST:$PORT" --worker-url "$WORKER" --worker-offsets-topic "$TOPIC" \
    --region "$REGION" --credentials "$DIR/credentials" \
    --worker-configuration "kco-a-pinned=$DIR/worker-configuration.properties" --arn-dir "$DIR"
  local _
  for _ in $(seq 100); do
    ready && [[ -s $DIR/kco-a-pinned.arn ]] && break
    sleep 0.1
  done
  if ! ready || [[ ! -s $DIR/kco-a-pinned.arn ]]; then
    die "kco-msk-standin does not answer on $URL; see $DIR/standin.log"
  fi
  write_snippets
  say "up: $URL -> $WORKER (credentials in $DIR/credentials, profile kco-msk; source $DIR/env)"
  cat "$DIR/kco.yaml"
}

cmd_down() {
  local pid
  if pid=$(live_pid); then
    say "stopping kco-msk-standin (pid $pid)"
    stop_daemon "$pid" TERM
  fi
  rm -rf "$DIR"
}

cmd_status() {
  local pid
  if pid=$(live_pid); then
    printf '  %-8s pid %-7s %s -> %s  (MSK Connect stand-in)\n' msk "$pid" "$URL" "$WORKER"
    return 0
  fi
  printf '  %-8s stopped\n' msk
  return 1
}

service_main "$0" "${1:-}"
