# Sourced by scripts/local-connect.sh: the configuration files of the broker and the
# workers, and the formatting of the KRaft storage.
# shellcheck shell=bash

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

  local plugins=""
  if [[ $WITH_PG == 1 ]]; then
    plugins="plugin.path=$STATE/plugins"
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
$plugins
EOF
  done
  # The standalone worker keeps source offsets in a file; sink offsets stay in Kafka.
  cat >"$STATE/conf/s1.properties" <<EOF
bootstrap.servers=$HOST:$KAFKA_PORT
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter.schemas.enable=false
offset.storage.file.filename=$STATE/data/s1.offsets
offset.flush.interval.ms=1000
listeners=HTTP://$HOST:$S_PORT
rest.advertised.host.name=$HOST
rest.advertised.port=$S_PORT
connector.client.config.override.policy=All
plugin.discovery=service_load
$plugins
EOF
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

