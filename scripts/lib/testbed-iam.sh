# Sourced by scripts/local-connect.sh (after testbed-procs.sh): the test bed's stand-in for
# Amazon MSK's IAM listener. The broker gets one more listener, IAM (SASL_PLAINTEXT on
# KCO_IAM_PORT, default 9096: the bed's broker has no TLS certificate, and TLS to Kafka is
# kco's rustls path whatever the mechanism), whose OAUTHBEARER tokens are checked by
# testbed/iam/kco/testbed/MskIamValidator.java: MSK's token (a SigV4 presigned URL),
# its signature recomputed with test credentials written here at each `up`.
#
# Writes <state>/iam/: keys.properties (the validator's: access key id = secret key),
# credentials (an AWS shared credentials file, profile `kco-testbed`), env (the same keys as
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY lines), region, kco.yaml (a snippet).
# shellcheck shell=bash

IAM_REGION=eu-west-1

# iam_validator_jar CLASSPATH_FILE: the validator compiled against the Kafka jars of the
# classpath, cached per Kafka release and rebuilt when its source is newer; prints its path.
# About 2 s the first time (javac), nothing after.
iam_validator_jar() {
  local cp_file=$1 src="$ROOT/testbed/iam/kco/testbed/MskIamValidator.java"
  local out="$STATE/classpath/iam-$KAFKA_VERSION"
  if [[ -s $out.jar && ! $src -nt $out.jar ]]; then
    echo "$out.jar"
    return 0
  fi
  rm -rf "$out" && mkdir -p "$out/classes"
  javac -nowarn --release 17 -d "$out/classes" -cp "$(tr -d '\n' <"$cp_file")" "$src" >"$out/javac.log" 2>&1 ||
    die "could not compile the test bed's MSK IAM validator (see $out/javac.log)"
  jar cf "$out.jar" -C "$out/classes" . || die "could not package the test bed's MSK IAM validator"
  echo "$out.jar"
}

# New test credentials (random, fresh at each `up`) and the files that hold them.
write_iam_files() {
  local dir="$STATE/iam" akid secret
  rm -rf "$dir" && mkdir -p "$dir"
  chmod 700 "$dir"
  akid=AKIAKCOTESTBED$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F | head -c 6)
  secret=$(head -c 30 /dev/urandom | base64 | tr '+/' 'Ab' | head -c 40)
  printf '%s=%s\n' "$akid" "$secret" >"$dir/keys.properties"
  printf '[kco-testbed]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$akid" "$secret" >"$dir/credentials"
  printf 'AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n' "$akid" "$secret" >"$dir/env"
  echo "$IAM_REGION" >"$dir/region"
  chmod 600 "$dir/keys.properties" "$dir/credentials" "$dir/env"
  cat >"$dir/kco.yaml" <<EOF2
# Cluster a's Connect read through the IAM listener; credentials: AWS_SHARED_CREDENTIALS_FILE=$dir/credentials
clusters:
  a:
    urls: [http://$HOST:${A1_PORT:-8083}]
    kafka:
      bootstrap: "$HOST:$IAM_PORT"
      sasl: {mechanism: AWS_MSK_IAM, region: $IAM_REGION, profile: kco-testbed}
    connectTopics: {offsets: kco-a-offsets}
EOF2
}

# The broker properties of the IAM listener (appended to those write_broker_properties wrote);
# the broker's own login (not used: no client of the broker uses this listener) is Kafka's
# unsecured one, which wants a subject.
iam_broker_properties() {
  cat <<EOF2
listener.name.iam.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.iam.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="kco-testbed-broker" credentialsFile="$STATE/iam/keys.properties" region="$IAM_REGION";
listener.name.iam.oauthbearer.sasl.server.callback.handler.class=kco.testbed.MskIamValidator
EOF2
}
