#!/usr/bin/env bash
# kco's main job on a throwaway local cluster:
#   1. start a real Kafka + Kafka Connect (scripts/local-connect.sh) and two connectors;
#   2. kco snapshot: every connector's offsets into YAML files, committed to git;
#   3. kco diff: normal progress is "advanced"; a lost connector is "missing";
#   4. kco diff --base: a pull request that rewinds a sink, with its risk label;
#   5. kco apply: the rewind, applied safely (stop, patch, verify, resume);
#   6. kco apply --as --create: the lost source recreated on cluster b, continuing
#      from the same position.
# Safe to run again: each run uses fresh connector names, topics and a fresh work dir.
#
# Environment: everything scripts/local-connect.sh reads (KAFKA_VERSION, KCO_TESTBED_*);
# KCO_DEMO_DOWN=1 stops the test bed at the end.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
A1="http://127.0.0.1:${KCO_TESTBED_A1_PORT:-8083}"
A2="http://127.0.0.1:${KCO_TESTBED_A2_PORT:-8084}"
B="http://127.0.0.1:${KCO_TESTBED_B_PORT:-8085}"
RUN=$(date +%s)
WORK="$STATE/demo/run-$RUN"
SOURCE="demo-orders-source-$RUN"
SINK="demo-orders-sink-$RUN"
TOPIC="demo-orders-$RUN"
INPUT="$WORK/orders.txt"
OUTPUT="$WORK/orders-copy.txt"

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
run() {
  printf '$ %s\n' "$*"
  "$@"
}
die() {
  printf 'demo.sh: error: %s\n' "$*" >&2
  exit 1
}
on_exit() {
  local rc=$?
  ((rc == 0)) || printf "demo.sh: failed (exit %s); logs: scripts/local-connect.sh logs\n" "$rc" >&2
}
trap on_exit EXIT

lines() { [[ -f $1 ]] && wc -l <"$1" | tr -d ' ' || echo 0; }
wait_lines() { # file count
  local deadline=$((SECONDS + 90))
  until (($(lines "$1") >= $2)); do
    ((SECONDS < deadline)) || die "$1 has $(lines "$1") lines, expected $2"
    sleep 0.5
  done
}
wait_offsets() { # url name grep-pattern
  local deadline=$((SECONDS + 90))
  until curl -fsS "$1/connectors/$2/offsets" 2>/dev/null | grep -q "$3"; do
    ((SECONDS < deadline)) || die "connector $2 never committed offsets matching $3"
    sleep 0.5
  done
}
create() { # url name json-config
  curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' "$1/connectors" \
    -d "{\"name\":\"$2\",\"config\":$3}"
}
append() { # from to
  local i
  for ((i = $1; i <= $2; i++)); do printf 'order %04d\n' "$i"; done >>"$INPUT"
}

say "building kco"
(cd "$ROOT" && cargo build --quiet)
KCO="$ROOT/target/debug/kco"
PATH="$(dirname "$KCO"):$PATH"
export PATH

say "starting the local test bed (Kafka in KRaft mode, Connect clusters a and b)"
bash "$ROOT/scripts/local-connect.sh" up

mkdir -p "$WORK"
cd "$WORK"
cat >kco.yaml <<EOF
# Clusters of the local test bed; see kco.example.yaml for auth and TLS.
defaultCluster: a
clusters:
  a:
    urls: [$A1, $A2]
  b:
    urls: [$B]
EOF

say "two connectors on cluster a: $SOURCE (orders.txt -> $TOPIC) and $SINK ($TOPIC -> orders-copy.txt)"
append 1 100
create "$A1" "$SOURCE" "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSourceConnector\",\"tasks.max\":\"1\",\"file\":\"$INPUT\",\"topic\":\"$TOPIC\"}"
create "$A1" "$SINK" "{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSinkConnector\",\"tasks.max\":\"1\",\"file\":\"$OUTPUT\",\"topics\":\"$TOPIC\"}"
wait_lines "$OUTPUT" 100
wait_offsets "$A1" "$SOURCE" "\"position\":$(wc -c <"$INPUT" | tr -d ' ')[},]"
wait_offsets "$A1" "$SINK" '"kafka_offset":100[},]'
echo "100 orders flowed through; orders-copy.txt has $(lines "$OUTPUT") lines"

say "kco snapshot: every connector's offsets, one YAML file each (with config, secrets redacted)"
run kco snapshot "demo-orders-*-$RUN" --with-config
run cat "snapshots/a/$SINK.yaml"
git init -q . && git add -A && git -c user.name=demo -c user.email=demo@localhost commit -qm "offsets of cluster a"

say "more orders arrive; kco diff calls that progress 'advanced' (exit 0: not drift)"
append 101 120
wait_lines "$OUTPUT" 120
wait_offsets "$A1" "$SINK" '"kafka_offset":120[},]'
run kco diff "$SINK" && echo "exit code 0"

say "a pull request rewinds the sink by 20 records; kco diff --base shows the risk"
sed -i 's/kafka_offset: 100$/kafka_offset: 80/' "snapshots/a/$SINK.yaml"
run kco validate "snapshots/a/$SINK.yaml" || echo "(validate refuses the unsealed edit, as it should)"
run kco fmt "snapshots/a/$SINK.yaml"
set +e
run kco diff --base HEAD --output markdown
echo "exit code $? (2: differences)"
set -e
git -c user.name=demo -c user.email=demo@localhost commit -qam "rewind $SINK to 80"

say "kco apply: plan, backup, stop, patch, verify, resume"
run kco apply "snapshots/a/$SINK.yaml" --yes
wait_lines "$OUTPUT" 160
echo "the sink re-consumed orders 81..120 (live was at 120): orders-copy.txt now has $(lines "$OUTPUT") lines"
say "the same apply again: nothing to do, no request that changes anything"
run kco apply "snapshots/a/$SINK.yaml" --yes

say "move the source to cluster b: stop it, snapshot it exactly, delete it"
curl -fsS -o /dev/null -X PUT "$A1/connectors/$SOURCE/stop"
deadline=$((SECONDS + 60))
until curl -fsS "$A1/connectors/$SOURCE/status" | grep -q '"state":"STOPPED","worker_id"[^]]*"tasks":\[\]'; do
  ((SECONDS < deadline)) || die "$SOURCE did not stop"
  sleep 0.5
done
run kco snapshot "$SOURCE" --with-config
curl -fsS -o /dev/null -X DELETE "$A1/connectors/$SOURCE"
set +e
run kco diff "snapshots/a/$SOURCE.yaml"
echo "exit code $? (2: the connector is missing on cluster a)"
set -e

say "kco apply --as --create: recreated on cluster b, continuing from the same position"
append 121 130
run kco apply "snapshots/a/$SOURCE.yaml" --cluster b --as "$SOURCE-on-b" --create --create-state running --yes
wait_lines "$OUTPUT" 170
echo "orders-copy.txt has $(lines "$OUTPUT") lines: 160, then orders 121..130 once"
diff <(tail -n 10 "$OUTPUT") <(seq -f 'order %04g' 121 130) >/dev/null ||
  die "the last 10 lines are not orders 121..130"
echo "the last 10 lines are orders 121..130, in order: no line lost or repeated"

say "done"
cat <<EOF
Work dir: $WORK (kco.yaml, snapshots/, git history, backups in .kco/backups/)
Connectors left running: $SINK on cluster a, $SOURCE-on-b on cluster b.
EOF
if [[ ${KCO_DEMO_DOWN:-0} == 1 ]]; then
  bash "$ROOT/scripts/local-connect.sh" down
else
  echo "Stop the test bed with: scripts/local-connect.sh down"
fi
