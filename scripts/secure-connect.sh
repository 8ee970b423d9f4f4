#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Secure Connect cluster "s" for kco's tests: one distributed worker at
# https://127.0.0.1:8443 that requires a client certificate (mutual TLS) and basic auth
# (Kafka's connect-basic-auth-extension), on the broker of scripts/local-connect.sh.
#
# Usage: scripts/secure-connect.sh <command>
#   up       make a CA and certificates (keytool, openssl), start the worker, wait until it
#            serves; print a kco.yaml snippet for cluster s. Harmless when already up.
#   down     stop the worker and delete its certificates and state
#   status   show the worker, its pid and URL (exit 0 only when it runs)
#
# Needs `scripts/local-connect.sh up` first (its broker, and the jars it resolved).
#
# Writes <state>/secure/: ca.pem, client.pem, client-key.pem, credentials (user:password),
# kco.yaml (the snippet) and the worker's keystores, config and JAAS file.
#
# Environment:
#   KCO_SECURE_PORT     the worker's HTTPS port (default 8443)
#   KCO_TESTBED_DIR, KCO_TESTBED_KAFKA_PORT, KAFKA_VERSION, JAVA_HOME, MAVEN_OPTS:
#                       as for scripts/local-connect.sh
#   KCO_TESTBED_WAIT_SECS  how long `up` waits for the worker (default 180)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KAFKA_VERSION=${KAFKA_VERSION:-4.3.1}
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
SEC="$STATE/secure"
PORT=${KCO_SECURE_PORT:-8443}
KAFKA_PORT=${KCO_TESTBED_KAFKA_PORT:-9092}
KEYTOOL=${JAVA_HOME:+$JAVA_HOME/bin/}keytool
NAME=sec1
USER_NAME=kco
STOREPASS=kco-testbed-store

# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
# shellcheck source=lib/testbed-procs.sh
source "$ROOT/scripts/lib/testbed-procs.sh"
# shellcheck source=lib/testbed-conf.sh
source "$ROOT/scripts/lib/testbed-conf.sh"

# The jar of Kafka's basic-auth REST extension, fetched with Maven when missing.
extension_jar() {
  local repo=$HOME/.m2/repository
  if [[ ${MAVEN_OPTS:-} =~ -Dmaven\.repo\.local=([^[:space:]]+) ]]; then
    repo=${BASH_REMATCH[1]}
  fi
  local jar="$repo/org/apache/kafka/connect-basic-auth-extension/$KAFKA_VERSION/connect-basic-auth-extension-$KAFKA_VERSION.jar"
  if [[ ! -f $jar ]]; then
    say "fetching connect-basic-auth-extension $KAFKA_VERSION with Maven..."
    mvn -B -q dependency:get "-Dartifact=org.apache.kafka:connect-basic-auth-extension:$KAFKA_VERSION" >&2 ||
      die "Maven could not fetch org.apache.kafka:connect-basic-auth-extension:$KAFKA_VERSION"
  fi
  [[ -f $jar ]] || die "no $jar after Maven ran"
  echo "$jar"
}

# A CA, a server certificate for 127.0.0.1/localhost and a client certificate, both signed
# by the CA; PEM copies for kco.
make_certs() {
  [[ -s $SEC/client-key.pem ]] && return 0
  command -v openssl >/dev/null || die "openssl not found (Debian: apt-get install openssl)"
  mkdir -p "$SEC"
  chmod 700 "$SEC"
  local kt=("$KEYTOOL" -storepass "$STOREPASS" -keypass "$STOREPASS" -noprompt)
  rm -f "$SEC"/*.p12 "$SEC"/*.csr "$SEC"/*.crt
  "${kt[@]}" -genkeypair -alias ca -keyalg RSA -keysize 2048 -validity 30 \
    -dname "CN=kco test CA" -ext bc:c -keystore "$SEC/ca.p12" -storetype PKCS12 >/dev/null 2>&1
  "${kt[@]}" -exportcert -rfc -alias ca -keystore "$SEC/ca.p12" -file "$SEC/ca.pem" >/dev/null 2>&1
  local who
  for who in server client; do
    local ext=() dname="CN=kco-client"
    if [[ $who == server ]]; then
      dname="CN=localhost"
      ext=(-ext "san=ip:127.0.0.1,dns:localhost" -ext "eku=serverAuth")
    else
      ext=(-ext "eku=clientAuth")
    fi
    "${kt[@]}" -genkeypair -alias "$who" -keyalg RSA -keysize 2048 -validity 30 \
      -dname "$dname" -keystore "$SEC/$who.p12" -storetype PKCS12 >/dev/null 2>&1
    "${kt[@]}" -certreq -alias "$who" -keystore "$SEC/$who.p12" -file "$SEC/$who.csr" >/dev/null 2>&1
    "${kt[@]}" -gencert -alias ca -keystore "$SEC/ca.p12" -infile "$SEC/$who.csr" \
      -outfile "$SEC/$who.crt" -rfc -validity 30 "${ext[@]}" >/dev/null 2>&1
    "${kt[@]}" -importcert -alias ca -file "$SEC/ca.pem" -keystore "$SEC/$who.p12" >/dev/null 2>&1
    "${kt[@]}" -importcert -alias "$who" -file "$SEC/$who.crt" -keystore "$SEC/$who.p12" >/dev/null 2>&1
  done
  "${kt[@]}" -importcert -alias ca -file "$SEC/ca.pem" -keystore "$SEC/truststore.p12" \
    -storetype PKCS12 >/dev/null 2>&1
  cp "$SEC/client.crt" "$SEC/client.pem"
  openssl pkcs12 -in "$SEC/client.p12" -passin "pass:$STOREPASS" -nodes -nocerts 2>/dev/null |
    openssl pkey -out "$SEC/client-key.pem"
  chmod 600 "$SEC/client-key.pem"
  local password
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  printf '%s:%s\n' "$USER_NAME" "$password" >"$SEC/credentials"
  printf '%s: %s\n' "$USER_NAME" "$password" >"$SEC/users.properties"
  chmod 600 "$SEC/credentials" "$SEC/users.properties"
}

write_config() {
  cat >"$SEC/jaas.conf" <<EOF
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="$SEC/users.properties";
};
EOF
  write_distributed_worker_properties "$SEC/$NAME.properties" "$HOST:$KAFKA_PORT" \
    "https://$HOST:$PORT" s 1 \
    listeners.https.ssl.keystore.type=PKCS12 \
    "listeners.https.ssl.keystore.location=$SEC/server.p12" \
    "listeners.https.ssl.keystore.password=$STOREPASS" \
    "listeners.https.ssl.key.password=$STOREPASS" \
    listeners.https.ssl.truststore.type=PKCS12 \
    "listeners.https.ssl.truststore.location=$SEC/truststore.p12" \
    "listeners.https.ssl.truststore.password=$STOREPASS" \
    listeners.https.ssl.client.auth=required \
    rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
  cat >"$SEC/kco.yaml" <<EOF
clusters:
  s:
    urls: [https://$HOST:$PORT]
    auth:
      basic: {username: $USER_NAME, password: "\${env:KCO_S_PASSWORD}"}
    tls:
      caFile: $SEC/ca.pem
      certFile: $SEC/client.pem
      keyFile: $SEC/client-key.pem
EOF
}

# Ready: GET / answers 200 with the client certificate and the credentials.
ready() {
  [[ -f $SEC/credentials ]] || return 1
  curl -fsS -m 5 -o /dev/null --cacert "$SEC/ca.pem" --cert "$SEC/client.pem" \
    --key "$SEC/client-key.pem" -u "$(<"$SEC/credentials")" "https://$HOST:$PORT/connectors" 2>/dev/null
}

cmd_up() {
  if live_pid "$NAME" >/dev/null && ready; then
    say "cluster s already runs at https://$HOST:$PORT"
    print_snippet
    return 0
  fi
  local cp="$STATE/classpath/$KAFKA_VERSION.txt"
  [[ -s $cp && -f $STATE/conf/log4j2.properties ]] ||
    die "run scripts/local-connect.sh up first (no classpath at $cp)"
  port_open "$KAFKA_PORT" ||
    die "no broker at $HOST:$KAFKA_PORT: run scripts/local-connect.sh up first"
  local jar
  jar=$(extension_jar)
  make_certs
  write_config
  mkdir -p "$STATE/run" "$STATE/logs"
  local log pidf
  log=$(log_file "$NAME")
  pidf=$(pid_file "$NAME")
  set_log_opts
  printf '\n===== %s: starting %s =====\n' "$(date -u +%FT%TZ)" "$NAME" >>"$log"
  spawn_daemon "$pidf" "$log" \
    "$JAVA" -Xms96m -Xmx384m "${JVM_COMMON[@]}" "-Dkco.testbed.process=$NAME" \
    "-Dkco.testbed.dir=$STATE" "${LOG_OPTS[@]}" "-Djava.security.auth.login.config=$SEC/jaas.conf" \
    -cp "$(tr -d '\n' <"$cp"):$jar" org.apache.kafka.connect.cli.ConnectDistributed \
    "$SEC/$NAME.properties"
  local deadline=$((SECONDS + WAIT_SECS))
  until ready; do
    if ! live_pid "$NAME" >/dev/null && [[ -s $pidf ]]; then
      tail -n 25 "$log" >&2
      die "the secure worker exited during startup (log: $log)"
    fi
    ((SECONDS < deadline)) || die "the secure worker did not serve https://$HOST:$PORT within ${WAIT_SECS}s (log: $log)"
    sleep 0.5
  done
  say "cluster s serves https://$HOST:$PORT (mutual TLS and basic auth)"
  print_snippet
}

print_snippet() {
  say "kco.yaml for cluster s ($SEC/kco.yaml); the password is the part after ':' in $SEC/credentials:"
  cat "$SEC/kco.yaml"
}

cmd_down() {
  stop_procs "$NAME"
  rm -rf "$SEC"
}

cmd_status() {
  local pid
  if pid=$(live_pid "$NAME"); then
    printf '  %-8s pid %-7s https://%s:%s  (cluster s)\n' "$NAME" "$pid" "$HOST" "$PORT"
    return 0
  fi
  printf '  %-8s stopped\n' "$NAME"
  return 1
}

service_main "$0" "${1:-}"
