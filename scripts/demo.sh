#!/usr/bin/env bash
# A first look at connector offsets: starts the local test bed, runs a FileStreamSource
# connector on a generated file and shows the offsets Connect keeps for it.
# Safe to run again: it reuses the running test bed, the file and the connector.
#
# Environment: everything scripts/local-connect.sh reads (KAFKA_VERSION, KCO_TESTBED_*).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
CONNECT="http://127.0.0.1:${KCO_TESTBED_A1_PORT:-8083}"
NAME=kco-demo-source
TOPIC=kco-demo
INPUT="$STATE/demo/input.txt"
LINES=100

say() { printf '\n==> %s\n' "$*"; }
die() {
  printf 'demo.sh: error: %s\n' "$*" >&2
  exit 1
}

# Pretty-prints JSON from stdin when python3 is around, else passes it through.
show_json() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -m json.tool
  else
    cat
    echo
  fi
}

say "starting the local test bed"
bash "$ROOT/scripts/local-connect.sh" up

mkdir -p "$(dirname "$INPUT")"
if [[ ! -s $INPUT ]]; then
  say "writing $LINES lines to $INPUT"
  for ((i = 1; i <= LINES; i++)); do printf 'demo record %03d\n' "$i"; done >"$INPUT"
fi
size=$(wc -c <"$INPUT")
size=${size// /}

if curl -fsS -o /dev/null "$CONNECT/connectors/$NAME" 2>/dev/null; then
  say "connector $NAME already exists"
else
  say "creating connector $NAME (FileStreamSource: $INPUT -> topic $TOPIC)"
  curl -fsS -X POST -H 'Content-Type: application/json' "$CONNECT/connectors" -d @- <<EOF | show_json
{"name": "$NAME",
 "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1", "file": "$INPUT", "topic": "$TOPIC"}}
EOF
fi

say "waiting until Connect has committed the offset of the whole file ($size bytes)"
deadline=$((SECONDS + 60))
until curl -fsS "$CONNECT/connectors/$NAME/offsets" 2>/dev/null | grep -q "\"position\":${size}[},]"; do
  ((SECONDS < deadline)) || die "no committed offset at position $size after 60 s; see scripts/local-connect.sh logs"
  sleep 0.5
done

say "GET $CONNECT/connectors/$NAME/status"
curl -fsS "$CONNECT/connectors/$NAME/status" | show_json

say "GET $CONNECT/connectors/$NAME/offsets"
curl -fsS "$CONNECT/connectors/$NAME/offsets" | show_json

cat <<EOF

The source partition is the file name; its offset is the byte position read so far.
Stop the test bed with: scripts/local-connect.sh down
EOF
