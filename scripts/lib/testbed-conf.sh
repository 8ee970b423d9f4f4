# Sourced by scripts/local-connect.sh, secure-connect.sh and dr-connect.sh (after
# testbed-procs.sh): the configuration files of the brokers and the workers, and the
# formatting of a broker's KRaft storage.
# shellcheck shell=bash

# --- configuration ------------------------------------------------------------

write_configs() {
  local cp=$1
  mkdir -p "$STATE/conf"
  # The MSK IAM validator (scripts/lib/testbed-iam.sh) on the classpath: the broker loads it.
  local iam_jar
  iam_jar=$(iam_validator_jar "$cp")
  write_iam_files
  printf -- '-cp "%s:%s"\n' "$(tr -d '\n' <"$cp")" "$iam_jar" >"$STATE/conf/classpath.args"

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
  else
    write_log4j1_config "$STATE/conf/log4j.properties"
  fi
  set_log_opts

  write_broker_properties "$STATE/conf/broker.properties" "$KAFKA_PORT" "$CONTROLLER_PORT" \
    "$STATE/data/kafka" 5 "" "$IAM_PORT"
  iam_broker_properties >>"$STATE/conf/broker.properties"

  local plugins=()
  if [[ $WITH_PG == 1 ]]; then
    plugins=("plugin.path=$STATE/plugins")
  fi
  local name
  for name in "${WORKERS[@]}"; do
    write_distributed_worker_properties "$STATE/conf/$name.properties" "$HOST:$KAFKA_PORT" \
      "http://$HOST:$(worker_port "$name")" "$(worker_cluster "$name")" 5 "${plugins[@]}"
  done
  # The standalone worker keeps source offsets in a file; sink offsets stay in Kafka.
  write_worker_properties "$STATE/conf/s1.properties" "$HOST:$KAFKA_PORT" "http://$HOST:$S_PORT" \
    "offset.storage.file.filename=$STATE/data/s1.offsets" "${plugins[@]}"
}

# write_broker_properties FILE PORT CONTROLLER_PORT LOG_DIR INTERNAL_PARTITIONS [SASL_PORT [IAM_PORT]]
# The config of a single-node Kafka broker (KRaft, combined mode): PLAINTEXT on PORT, and with
# SASL_PORT also SASL_PLAINTEXT with SCRAM-SHA-512 there; with IAM_PORT a listener IAM
# (SASL_PLAINTEXT) there, whose settings iam_broker_properties adds; its controller on CONTROLLER_PORT,
# its data in LOG_DIR, every topic unreplicated, the internal ones with INTERNAL_PARTITIONS
# partitions.
write_broker_properties() {
  local file=$1 port=$2 controller=$3 dir=$4 partitions=$5 sasl=${6:-} iam=${7:-}
  local listeners="PLAINTEXT://$HOST:$port" protocols=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
  if [[ -n $sasl ]]; then
    listeners+=",SASL_PLAINTEXT://$HOST:$sasl"
    protocols+=",SASL_PLAINTEXT:SASL_PLAINTEXT"
  fi
  if [[ -n $iam ]]; then
    listeners+=",IAM://$HOST:$iam"
    protocols+=",IAM:SASL_PLAINTEXT"
  fi
  {
    cat <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$controller
listeners=$listeners,CONTROLLER://$HOST:$controller
advertised.listeners=$listeners
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
log.dirs=$dir
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=$partitions
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=$partitions
auto.create.topics.enable=true
group.initial.rebalance.delay.ms=0
EOF
    if [[ -n $sasl ]]; then
      echo sasl.enabled.mechanisms=SCRAM-SHA-512
      echo 'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;'
    fi
    if (($(kafka_major) >= 4)); then
      echo share.coordinator.state.topic.replication.factor=1
      echo share.coordinator.state.topic.min.isr=1
    fi
  } >"$file"
}

# write_log4j1_config FILE: the logging config of a Kafka 3.x process (log4j 1, reload4j).
write_log4j1_config() {
  cat >"$1" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %X{connector.context}%m (%c)%n
log4j.logger.org.apache.kafka.common.config.AbstractConfig=WARN
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=WARN
EOF
}

# LOG_OPTS: the JVM options that point Kafka at the logging config write_configs wrote
# (log4j 2 from Kafka 4 on, log4j 1 before).
set_log_opts() {
  if (($(kafka_major) >= 4)); then
    LOG_OPTS=("-Dlog4j2.configurationFile=$STATE/conf/log4j2.properties")
  else
    LOG_OPTS=("-Dlog4j.configuration=file:$STATE/conf/log4j.properties")
  fi
}

# write_worker_properties FILE BOOTSTRAP LISTENER [PROPERTY...]
# The config of a Connect worker of the test bed: Kafka at BOOTSTRAP, schemaless JSON,
# offsets flushed every second, the REST API on LISTENER (http://HOST:PORT or
# https://HOST:PORT, advertised so), client overrides allowed, plugins found by their
# manifests; then each PROPERTY (`key=value`).
write_worker_properties() {
  local file=$1 bootstrap=$2 listener=$3
  shift 3
  {
    cat <<EOF
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter.schemas.enable=false
offset.flush.interval.ms=1000
listeners=$listener
rest.advertised.host.name=$HOST
rest.advertised.port=${listener##*:}
rest.advertised.listener=${listener%%://*}
connector.client.config.override.policy=All
plugin.discovery=service_load
EOF
    if (($# > 0)); then printf '%s\n' "$@"; fi
  } >"$file"
}

# write_distributed_worker_properties FILE BOOTSTRAP LISTENER CLUSTER OFFSET_PARTITIONS [PROPERTY...]
# The config of a distributed worker of Connect cluster CLUSTER: group kco-CLUSTER, its
# internal topics kco-CLUSTER-* unreplicated (OFFSET_PARTITIONS partitions for the offsets),
# rebalancing at once; otherwise as write_worker_properties.
write_distributed_worker_properties() {
  local file=$1 bootstrap=$2 listener=$3 cluster=$4 partitions=$5
  shift 5
  write_worker_properties "$file" "$bootstrap" "$listener" \
    "group.id=kco-$cluster" \
    "config.storage.topic=kco-$cluster-configs" \
    "offset.storage.topic=kco-$cluster-offsets" \
    "status.storage.topic=kco-$cluster-status" \
    config.storage.replication.factor=1 \
    offset.storage.replication.factor=1 \
    status.storage.replication.factor=1 \
    "offset.storage.partitions=$partitions" \
    status.storage.partitions=1 \
    scheduled.rebalance.max.delay.ms=0 \
    "$@"
}

# format_storage NAME PROPERTIES [STORAGE_TOOL_ARG...]
# Formats the KRaft storage of broker NAME, configured by PROPERTIES, under a new cluster id;
# the tool's output goes to NAME's log.
format_storage() {
  local name=$1 conf=$2
  shift 2
  local id=-
  # A random 16-byte cluster id in Kafka's URL-safe base64 form; one starting with "-"
  # would be taken for an option by the storage tool.
  while [[ $id == -* ]]; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  done
  local log
  log=$(log_file "$name")
  printf '\n===== %s: formatting storage (cluster id %s) =====\n' "$(date -u +%FT%TZ)" "$id" >>"$log"
  "$JAVA" "${JVM_COMMON[@]}" "${LOG_OPTS[@]}" "@$STATE/conf/classpath.args" \
    kafka.tools.StorageTool format -t "$id" -c "$conf" "$@" >>"$log" 2>&1 ||
    fail_with_log "$name" "formatting the KRaft storage of $name failed"
}
